import HLSCacheTesting
import Testing

@testable import SegmentCache

/// Fills started ahead (``SegmentCache/startFill(_:)``) run on the caller's thread until they first wait, and are
/// recorded afterwards, outside the lock: `close()` must still find them, and one that ended first must not stay.
@Suite("Fills started ahead")
struct StartedAheadFillTests {
    @Test("close() cancels a fill started ahead and waits for it: nothing is published after it returns")
    func closeCancelsAndAwaitsAFillStartedAhead() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(3)
        let headGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: headGate), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        #expect(cache.startFill(key))
        #expect(origin.fetchCount(for: key) == 1)
        #expect(cache.withState { $0.fillTasks.count == 1 && $0.startingFills.isEmpty })
        let closing = Task { await cache.close() }
        #expect(try await eventually { cache.withState { $0.isClosed } })
        headGate.openForever()
        await closing.value
        #expect(cache.statistics.publishedFills == 0)
        #expect(cache.withState { $0.fillTasks.isEmpty && $0.flights.isEmpty })
    }

    @Test("a fill started ahead whose origin fails at once ends before it is recorded, and leaves no task behind")
    func aFillThatEndsWhileStartingLeavesNoTask() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let cache = try SegmentCache(configuration: directory.configuration(), source: DeadOrigin())
        let key = PatternOrigin.key(4)
        #expect(cache.startFill(key))
        #expect(cache.withState { $0.fillTasks.isEmpty && $0.startingFills.isEmpty && $0.flights.isEmpty })
        await cache.finishFills()
        await cache.close()
        #expect(cache.statistics.publishedFills == 0)
    }
}
