import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import NIOCore
import OriginClient
import Synchronization
import Testing

@testable import HLSCacheServer

/// The served process's threads as `--cpu-affinity` places them: with `auto`, each event loop and the origin thread of
/// its number on one processor when the process has one for each pair; by default (`off`), where the scheduler likes.
@Suite("CPU affinity", .sharedMachine)
struct CPUAffinityTests {
    @Test(
        "with --cpu-affinity auto each event loop and its origin thread share a processor, when there is one per pair")
    func pairsBoundWithAuto() async throws {
        // The served process inherits this one's affinity mask and cgroup, so it decides as this process would.
        let expected = ThreadPlacement.decide(
            mode: .auto, loops: System.coreCount, workers: OriginClientConfiguration.defaultWorkerThreads,
            allowed: ProcessorAffinity.allowed(), usable: ProcessorAffinity.usableCount)
        try await withServerProcess(arguments: ["--cpu-affinity", "auto"]) { server, origin in
            #expect(Self.logged(expected.summary, in: server.log), "\(server.log)")
            // A miss goes through a loop and an origin thread: both still where they were put.
            _ = try await TestHTTP.get(server.proxied(origin.url("/bytes/1000")))
            let threads = server.threadProcessors
            let loops = threads.filter { $0.name.hasPrefix("NIO-SGLTN-") }.sorted { $0.name < $1.name }
            let workers = threads.filter { $0.name.hasPrefix("hlscache-curl") }.sorted { $0.name < $1.name }
            if expected.processors.isEmpty {
                #expect((loops + workers).allSatisfy { $0.processors == ProcessorAffinity.allowed() })
            } else {
                #expect(loops.map(\.processors) == expected.processors.map { [$0] }, "\(threads)")
                #expect(workers.map(\.processors) == expected.processors.map { [$0] }, "\(threads)")
            }
            // Nothing else stays bound: the blocking reloads' thread, the pool, the disk threads (a pool thread a loop
            // started inherits its processor, until the server gives it the whole mask again, within a second).
            var others = Self.others(in: threads)
            let deadline = ContinuousClock.now + .seconds(5)
            while !others.allSatisfy({ $0.processors == ProcessorAffinity.allowed() }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                others = Self.others(in: server.threadProcessors)
            }
            #expect(others.allSatisfy { $0.processors == ProcessorAffinity.allowed() }, "\(others)")
        }
    }

    @Test("by default, as with --cpu-affinity off, no thread is bound", arguments: [[], ["--cpu-affinity", "off"]])
    func offBindsNothing(_ arguments: [String]) async throws {
        try await withServerProcess(arguments: arguments) { server, origin in
            _ = try await TestHTTP.get(server.proxied(origin.url("/bytes/1000")))
            #expect(Self.logged("off (--cpu-affinity off)", in: server.log), "\(server.log)")
            #expect(server.threadProcessors.allSatisfy { $0.processors == ProcessorAffinity.allowed() })
        }
    }

    /// A thread bound to one processor by a thread it started: given the process's whole mask again. Only this test's
    /// threads are looked at (the other tests' threads are not this test's to unbind).
    @Test("a thread started from a bound thread is given the whole mask again; the bound ones are kept")
    func strayThreadsUnbound() async throws {
        let allowed = ProcessorAffinity.allowed()
        guard allowed.count >= 2 else { return }
        let stray = BoundThread(name: "test-stray", processor: allowed[0])
        let kept = BoundThread(name: "test-stray-kept", processor: allowed[0])
        defer {
            stray.stop()
            kept.stop()
        }
        #expect(stray.processors() == [allowed[0]])
        #expect(stray.id > 0)
        // Only the stray is looked at: the kept thread is another's (as the loops are the server's).
        let unbound = ProcessorAffinity.unbindStrayThreads(to: allowed) { tid, _ in tid != stray.id }
        #expect(unbound == 1, "\(threadProcessors(ofProcess: getpid()).filter { $0.name.hasPrefix("test-stray") })")
        #expect(stray.processors() == allowed)
        #expect(kept.processors() == [allowed[0]])
        // With nothing bound, the server looks at no thread.
        #expect(ThreadPlacement(processors: [], unboundReason: "off").unbindStrayThreads() == 0)
    }

    private static func others(in threads: [(name: String, processors: [Int])]) -> [(name: String, processors: [Int])] {
        threads.filter { !$0.name.hasPrefix("NIO-SGLTN-") && !$0.name.hasPrefix("hlscache-curl") }
    }

    /// Whether the listening line logs `summary` as the placement (quoted when it has spaces).
    private static func logged(_ summary: String, in log: String) -> Bool {
        log.contains("cpu_affinity=\(summary) ") || log.contains("cpu_affinity=\"\(summary)\" ")
    }
}

/// A thread of this process bound to one processor, named, that tells its own mask when asked, until stopped.
private final class BoundThread: Sendable {
    private let asked = DispatchSemaphore(value: 0)
    private let answered = DispatchSemaphore(value: 0)
    private let state = Mutex<(mask: [Int], stopping: Bool)>(([], false))
    private let tid = Mutex<Int32>(-1)

    /// The thread's kernel id.
    var id: Int32 { tid.withLock { $0 } }

    init(name: String, processor: Int) {
        let thread = Thread { [self] in
            Thread.current.name = name
            try? ProcessorAffinity.bindCurrentThread(to: processor)
            tid.withLock { $0 = ProcessorAffinity.currentThreadID ?? -1 }
            answered.signal()
            while true {
                asked.wait()
                let stopping = state.withLock { state in
                    state.mask = ProcessorAffinity.allowed()
                    return state.stopping
                }
                answered.signal()
                if stopping { return }
            }
        }
        thread.start()
        answered.wait()
    }

    /// The thread's mask now, as the kernel gives it to the thread.
    func processors() -> [Int] {
        asked.signal()
        answered.wait()
        return state.withLock { $0.mask }
    }

    func stop() {
        state.withLock { $0.stopping = true }
        asked.signal()
        answered.wait()
    }
}
