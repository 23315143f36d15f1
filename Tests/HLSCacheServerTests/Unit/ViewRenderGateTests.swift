import HLSCacheTestTraits
import HLSCacheTesting
import Synchronization
import Testing

@testable import HLSCacheServer

/// The gate on renderings of views: a few at once, the rest in turn, and past its queue a refusal.
@Suite("View render gate", .sharedMachine)
struct ViewRenderGateTests {
    @Test("no more than its limit render at once; every one renders in turn")
    func limitHolds() async throws {
        let gate = ViewRenderGate(limit: 2)
        let counts = Counts()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await gate.run {
                        counts.state.withLock {
                            $0.running += 1
                            $0.most = max($0.most, $0.running)
                        }
                        try await Task.sleep(for: .milliseconds(5))
                        counts.state.withLock {
                            $0.running -= 1
                            $0.done += 1
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let final = counts.state.withLock { $0 }
        #expect(final.most == 2 && final.done == 20 && final.running == 0)
    }

    @Test("past its queue a rendering is refused at once, and the gate goes on")
    func fullQueueRefuses() async throws {
        let gate = ViewRenderGate(limit: 1)
        let release = AsyncStream<Void>.makeStream()
        let refused = Refusals()
        let extra = 2_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            // One holds the place until released; the queue fills behind it once it is inside (a loaded machine
            // once started it after the others, which then never queued: the test waited for ever).
            let holding = Flag()
            group.addTask {
                try await gate.run {
                    holding.set()
                    for await _ in release.stream { break }
                }
            }
            #expect(await holding.wait(timeout: .seconds(60)))
            // Many more than the queue holds, all at once: the count of waiting must be read and grown as one step
            // (a fresh-clone run once queued 257, refusing 9 of 10, when two raced for the last place).
            for _ in 0..<(ViewRenderGate.maxWaiting + extra) {
                group.addTask {
                    do {
                        try await gate.run {}
                    } catch is ViewRenderQueueFullError {
                        refused.count.add(1, ordering: .relaxed)
                    }
                }
            }
            #expect(try await eventually(timeout: .seconds(60)) { refused.count.load(ordering: .relaxed) >= extra })
            release.continuation.yield()
            try await group.waitForAll()
        }
        #expect(refused.count.load(ordering: .relaxed) == extra)
        let after = try await gate.run { 7 }
        #expect(after == 7)
    }
}

/// Counters the test's tasks share.
private final class Counts: Sendable {
    let state = Mutex((running: 0, most: 0, done: 0))
}

private final class Refusals: Sendable {
    let count = Atomic(0)
}
