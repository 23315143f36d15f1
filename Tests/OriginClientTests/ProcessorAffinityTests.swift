import Foundation
import HLSCacheTesting
import Synchronization
import Testing

@testable import OriginClient

/// Worker threads bound to the processors the configuration names, and fetches started on a thread going to that
/// thread's home worker: how a server keeps an event loop and its curl thread on one core.
@Suite(.timeLimit(.minutes(1))) struct ProcessorAffinityTests {
    @Test func aWorkerThreadIsBoundToItsProcessorAndOnePastTheListIsNot() async throws {
        let allowed = ProcessorAffinity.allowed()
        let processor = try #require(allowed.last)
        let client = try makeClient {
            $0.workerThreads = 2
            $0.workerProcessors = [processor]
            $0.threadName = "hlscache-bound"
        }
        defer { client.shutdown() }
        #expect(client.boundWorkerProcessors == [processor, nil])
        // Each thread names itself once it runs, which a loaded machine may not have let it do yet.
        #expect(
            try await eventually {
                Self.processors(ofThread: "hlscache-bound0") != nil
                    && Self.processors(ofThread: "hlscache-bound1") != nil
            })
        #expect(Self.processors(ofThread: "hlscache-bound0") == [processor])
        #expect(Self.processors(ofThread: "hlscache-bound1") == allowed)
    }

    @Test func aProcessorOutsideTheProcessCPUSetLeavesItsThreadUnbound() throws {
        let allowed = ProcessorAffinity.allowed()
        let outside = try #require((0..<1024).last { !allowed.contains($0) })
        let client = try makeClient { $0.workerProcessors = [outside] }
        defer { client.shutdown() }
        #expect(client.boundWorkerProcessors.first == .some(nil))
    }

    @Test(arguments: [-1, 1024])
    func aProcessorNumberOutsideZeroTo1023IsRefused(processor: Int) {
        var configuration = OriginClientConfiguration()
        configuration.workerProcessors = [processor]
        let error = #expect(throws: OriginError.self) { _ = try OriginClient(configuration: configuration) }
        #expect(error?.kind == .invalidConfiguration)
    }

    @Test func fetchesGoToTheThreadsHomeWorkerUntilItHasFourMoreThanTheLeastBusy() async throws {
        // Every request gets its head and a first kilobyte, then waits: each transfer stays active.
        let origin = try holdingOrigin()
        defer { origin.stop() }
        let client = try makeClient { $0.workerThreads = 2 }
        defer { client.shutdown() }

        var held = try await Self.fetch(5, from: "\(origin.base)/a", home: 1, with: client)
        #expect(client.activeTransfersPerWorker == [0, 5])
        // Five against none is more than four more: the next one goes to the least busy worker.
        held += try await Self.fetch(1, from: "\(origin.base)/b", home: 1, with: client)
        #expect(client.activeTransfersPerWorker == [1, 5])
        // A thread with no home worker: the least busy, as before.
        held += try await Self.fetch(2, from: "\(origin.base)/c", home: nil, with: client)
        #expect(client.activeTransfersPerWorker == [3, 5])
        held.removeAll()
        #expect(try await eventually { client.activeTransfers == 0 })
    }

    @Test func aThreadsHomeWorkerIsItsOwn() async throws {
        let homes = try await offPool { () -> [Int?] in
            OriginClient.setHomeWorker(3)
            let set = OriginClient.homeWorker
            OriginClient.setHomeWorker(nil)
            return [set, OriginClient.homeWorker]
        }
        #expect(homes == [3, nil])
        #expect(OriginClient.homeWorker == nil)
    }

    /// Makes `count` fetches, one after the other, each started from a thread of its own whose home worker is
    /// `home` (its worker chosen on that thread), and returns their responses once their heads are in.
    private static func fetch(
        _ count: Int, from base: String, home: Int?, with client: OriginClient
    ) async throws -> [OriginResponse] {
        var responses: [OriginResponse] = []
        for index in 0..<count {
            let task = try await offPool { () -> Task<OriginResponse, any Error> in
                OriginClient.setHomeWorker(home)
                defer { OriginClient.setHomeWorker(nil) }
                // Runs on this thread up to its first wait, after its worker is chosen and the transfer submitted.
                return Task.immediate { try await client.fetch(OriginRequest(url: "\(base)-\(index).ts")) }
            }
            responses.append(try await task.value)
        }
        return responses
    }

    /// The processors the thread of this process named `name` may run on.
    private static func processors(ofThread name: String) -> [Int]? {
        threadProcessors(ofProcess: getpid()).first { $0.name == name }?.processors
    }
}
