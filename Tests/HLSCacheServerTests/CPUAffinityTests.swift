import Foundation
import HLSCacheTesting
import NIOCore
import OriginClient
import Testing

@testable import HLSCacheServer

/// The served process's threads as `--cpu-affinity` places them: by default, each event loop and the origin thread of
/// its number on one processor when the process has one for each pair; with `off`, where the scheduler likes.
@Suite("CPU affinity")
struct CPUAffinityTests {
    @Test("by default each event loop and its origin thread share a processor, when there is one per pair")
    func pairsBoundByDefault() async throws {
        // The served process inherits this one's affinity mask and cgroup, so it decides as this process would.
        let expected = ThreadPlacement.decide(
            mode: .auto, loops: System.coreCount, workers: OriginClientConfiguration.defaultWorkerThreads,
            allowed: ProcessorAffinity.allowed(), usable: ProcessorAffinity.usableCount)
        try await withServerProcess { server, origin in
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
            // Nothing else is bound: the blocking reloads' thread, the pool, the disk threads.
            let others = threads.filter { !$0.name.hasPrefix("NIO-SGLTN-") && !$0.name.hasPrefix("hlscache-curl") }
            #expect(others.allSatisfy { $0.processors == ProcessorAffinity.allowed() }, "\(others)")
        }
    }

    @Test("with --cpu-affinity off no thread is bound")
    func offBindsNothing() async throws {
        try await withServerProcess(arguments: ["--cpu-affinity", "off"]) { server, origin in
            _ = try await TestHTTP.get(server.proxied(origin.url("/bytes/1000")))
            #expect(Self.logged("off (--cpu-affinity off)", in: server.log), "\(server.log)")
            #expect(server.threadProcessors.allSatisfy { $0.processors == ProcessorAffinity.allowed() })
        }
    }

    /// Whether the listening line logs `summary` as the placement (quoted when it has spaces).
    private static func logged(_ summary: String, in log: String) -> Bool {
        log.contains("cpu_affinity=\(summary) ") || log.contains("cpu_affinity=\"\(summary)\" ")
    }
}
