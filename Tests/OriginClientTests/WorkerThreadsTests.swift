import Foundation
import Glibc
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

@testable import OriginClient

/// A client runs its transfers on several curl threads: each new transfer on the least busy one, bodies whole.
@Suite(.timeLimit(.minutes(1))) struct WorkerThreadsTests {
    @Test func aNewTransferGoesToTheWorkerWithTheFewest() async throws {
        // `/done` is answered whole; anything else gets its head and a first kilobyte, then waits.
        let origin = try holdingOrigin()
        defer { origin.stop() }
        let client = try makeClient { $0.workerThreads = 2 }
        defer { client.shutdown() }

        var held = [try await client.fetch(OriginRequest(url: "\(origin.base)/held-1.ts"))]
        #expect(client.activeTransfersPerWorker == [1, 0])
        // The second thread takes this one (and may have finished it by now).
        let done = try await client.fetch(OriginRequest(url: "\(origin.base)/done"))
        #expect(try await readAll(done.body) == Array("end".utf8))
        #expect(try await eventually { client.activeTransfersPerWorker == [1, 0] })
        // Turn by turn this one would go to the first thread; the second has none.
        held.append(try await client.fetch(OriginRequest(url: "\(origin.base)/held-2.ts")))
        #expect(client.activeTransfersPerWorker == [1, 1])
        held.append(try await client.fetch(OriginRequest(url: "\(origin.base)/held-3.ts")))
        held.append(try await client.fetch(OriginRequest(url: "\(origin.base)/held-4.ts")))
        #expect(client.activeTransfersPerWorker == [2, 2])
        held.removeAll()
        #expect(try await eventually { client.activeTransfers == 0 })
    }

    @Test func bodiesFetchedAtOnceOverThreeThreadsArriveWhole() async throws {
        try await StreamOrigin.withRunning { origin in
            let client = try makeClient { $0.workerThreads = 3 }
            defer { client.shutdown() }
            // 1 MiB each: 9 of 3 MiB from this process's own origin once took over a minute under the whole suite.
            let size = 1 << 20
            let results = try await withThrowingTaskGroup(of: (count: Int, mismatches: Int).self) { group in
                for index in 0..<9 {
                    group.addTask {
                        let response = try await client.fetch(
                            OriginRequest(url: origin.url("/bytes/\(size)?n=\(index)")))
                        return try await readPattern(response.body)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(results.count == 9)
            #expect(results.allSatisfy { $0.count == size && $0.mismatches == 0 }, "\(results)")
            #expect(try await eventually { client.activeTransfers == 0 && client.bufferedBytes == 0 })
        }
    }

    @Test(arguments: [0, 65])
    func aThreadCountOutsideOneToSixtyFourIsRefused(threads: Int) {
        var configuration = OriginClientConfiguration()
        configuration.workerThreads = threads
        let error = #expect(throws: OriginError.self) { _ = try OriginClient(configuration: configuration) }
        #expect(error?.kind == .invalidConfiguration)
    }

    @Test func theThreadsCarryTheConfiguredNameAndTheirNumber() async throws {
        var configuration = OriginClientConfiguration()
        configuration.workerThreads = 2
        configuration.threadName = "hlscache-test"
        let client = try OriginClient(configuration: configuration)
        defer { client.shutdown() }
        // Each thread names itself once it runs.
        #expect(
            try await eventually {
                Self.threadNames().filter { $0.hasPrefix("hlscache-test") }.sorted()
                    == ["hlscache-test0", "hlscache-test1"]
            })
    }

    @Test(arguments: ["", "hls cache", "hlscache\n"])
    func aThreadNameThatIsNotPrintableASCIIIsRefused(name: String) {
        var configuration = OriginClientConfiguration()
        configuration.threadName = name
        let error = #expect(throws: OriginError.self) { _ = try OriginClient(configuration: configuration) }
        #expect(error?.kind == .invalidConfiguration)
    }

    /// The names of this process's threads (`/proc/self/task/*/comm`).
    private static func threadNames() -> [String] {
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return ids.compactMap { id in
            (try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines)
        }
    }

    private func readAll(_ body: OriginBody) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in body { bytes += chunk }
        return bytes
    }
}

/// The default thread count: the processors the process may use, not the host's.
@Suite(.sharedMachine) struct UsableProcessorsTests {
    @Test func theAffinityAndTheCgroupQuotaBoundTheCount() {
        #expect(UsableProcessors.count(affinity: 3, online: 64, cpuMax: nil) == 3)
        #expect(UsableProcessors.count(affinity: nil, online: 8, cpuMax: "max 100000\n") == 8)
        #expect(UsableProcessors.count(affinity: 16, online: 64, cpuMax: "150000 100000\n") == 2)
        #expect(UsableProcessors.count(affinity: 16, online: 64, cpuMax: "200000 100000") == 2)
        #expect(UsableProcessors.count(affinity: 1, online: 64, cpuMax: "400000 100000\n") == 1)
        #expect(UsableProcessors.count(affinity: 4, online: 4, cpuMax: "50000 100000\n") == 1)
        #expect(UsableProcessors.count(affinity: nil, online: 0, cpuMax: "garbage") == 1)
    }

    @Test func theCountOnThisMachineIsWithinTheOnlineProcessors() {
        let count = UsableProcessors.count
        #expect(count >= 1 && count <= Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #expect(OriginClientConfiguration.defaultWorkerThreads == min(4, count))
    }
}
