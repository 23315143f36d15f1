import HLSCacheTestTraits
import NIOCore
import NIOPosix
import OriginClient
import Testing

@testable import HLSCacheServer

/// When `--cpu-affinity auto` binds each event loop and its origin thread to a processor, and what binding a loop
/// does.
@Suite("Thread placement", .sharedMachine)
struct ThreadPlacementTests {
    @Test("auto binds pair i to the i-th processor of the mask when loops, origin threads and processors match")
    func autoBindsMatchingPairs() {
        let placement = ThreadPlacement.decide(mode: .auto, loops: 2, workers: 2, allowed: [2, 5], usable: 2)
        #expect(placement.processors == [2, 5])
        #expect(placement.unboundReason == nil)
        #expect(placement.summary == "2,5")
    }

    @Test(
        "auto binds nothing without a processor of its own for each pair, nor does off",
        arguments: [
            (ServerConfiguration.CPUAffinity.off, 2, 2, [0, 1], 2, "--cpu-affinity off"),
            (.auto, 1, 1, [0], 1, "one processor"),
            (.auto, 8, 4, Array(0..<8), 8, "8 event loops, 4 origin threads"),
            (.auto, 2, 2, [0, 1, 2, 3], 4, "2 event loops, 4 processors in the affinity mask"),
            (.auto, 2, 2, [0, 1], 1, "a CPU quota of 1 processors for 2 in the affinity mask"),
        ])
    func unboundCases(
        mode: ServerConfiguration.CPUAffinity, loops: Int, workers: Int, allowed: [Int], usable: Int, reason: String
    ) {
        let placement = ThreadPlacement.decide(
            mode: mode, loops: loops, workers: workers, allowed: allowed, usable: usable)
        #expect(placement.processors.isEmpty)
        #expect(placement.unboundReason == reason)
        #expect(placement.summary == "off (\(reason))")
    }

    @Test("binding the loops puts each on its processor, with the origin thread of its number as its home")
    func bindingTheLoops() async throws {
        let allowed = ProcessorAffinity.allowed()
        // The last processors first: a loop bound elsewhere than where it started.
        let processors = Array(allowed.reversed().prefix(2))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: processors.count)
        let loops = Array(group.makeIterator())
        let placement = ThreadPlacement(processors: processors, unboundReason: nil)
        #expect(await placement.bindEventLoops(loops).isEmpty)
        for (index, loop) in loops.enumerated() {
            let (bound, home) = try await loop.submit { (ProcessorAffinity.allowed(), OriginClient.homeWorker) }.get()
            #expect(bound == [processors[index]])
            #expect(home == index)
        }
        try await group.shutdownGracefully()
    }

    @Test("a processor the kernel refuses is reported, and its loop gets no home")
    func refusedBinding() async throws {
        let allowed = ProcessorAffinity.allowed()
        let outside = try #require((0..<1024).last { !allowed.contains($0) })
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        try await loop.submit { OriginClient.setHomeWorker(7) }.get()
        let refused = await ThreadPlacement(processors: [outside], unboundReason: nil).bindEventLoops([loop])
        #expect(refused.count == 1)
        #expect(refused.first?.contains("event loop 0: could not bind a thread to processor \(outside)") == true)
        let (bound, home) = try await loop.submit { (ProcessorAffinity.allowed(), OriginClient.homeWorker) }.get()
        #expect(bound == allowed)
        #expect(home == nil)
        try await group.shutdownGracefully()
    }
}
