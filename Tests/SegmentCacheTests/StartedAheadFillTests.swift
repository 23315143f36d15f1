import Foundation
import Glibc
import HLSCacheTesting
import Testing

@testable import SegmentCache

/// Fills started ahead (``SegmentCache/startFill(_:)``) run on the caller's thread until they first wait, and are
/// recorded afterwards, outside the lock: `close()` must still find them, and one that ended first must not stay.
/// One that ended before its request's fetch came is that fetch's answer.
@Suite("Fills started ahead")
struct StartedAheadFillTests {
    /// A cache over `source` in a directory of its own, closed and removed after `body`.
    private func withCache(_ source: some ObjectSource, _ body: (SegmentCache) async throws -> Void) async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let cache = try SegmentCache(configuration: directory.configuration(), source: source)
        try await body(cache)
        await cache.close()
    }

    /// The inodes of the fills' temporary files (`.part`) in `cache`'s temporary area.
    private func temporaryFiles(of cache: SegmentCache) -> [ino_t] {
        let directory = cache.layout.temporaryDirectory
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".part") }.compactMap { inode(of: "\(directory)/\($0)") }
    }

    private func inode(of path: String) -> ino_t? {
        var info = stat()
        return stat(path, &info) == 0 ? info.st_ino : nil
    }

    @Test(
        "a fill started ahead writes the temporary file made while its origin request was in flight, and publishes it")
    func aFillStartedAheadWritesItsPreparedFile() async throws {
        let origin = FakeOrigin()
        let key = PatternOrigin.key(7)
        let headGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: headGate), for: key.url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            #expect(cache.startFill(key, lookedUp: true))
            // Made before startFill returned, while the origin holds the answer.
            let prepared = temporaryFiles(of: cache)
            #expect(prepared.count == 1)
            headGate.openForever()
            #expect(try await eventually { cache.statistics.publishedFills == 1 })
            #expect(inode(of: cache.layout.path(of: EntryDigest(key))) == prepared.first, "the very file, renamed")
            #expect(temporaryFiles(of: cache).isEmpty)
            let hit = try await cache.fetch(key)
            #expect(try await hit.body.collect() == origin.body(of: key.url))
        }
    }

    @Test("a prepared temporary file is removed when its fill fails or its answer is not stored")
    func aPreparedFileUnusedIsRemoved() async throws {
        let origin = FakeOrigin()
        let failing = PatternOrigin.key(8)
        let passing = PatternOrigin.key(9)
        let gate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: gate, failBeforeHead: true), for: failing.url)
        origin.setBehaviour(FakeOrigin.Behaviour(cacheable: false, headGate: gate), for: passing.url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            #expect(cache.startFill(failing, lookedUp: true))
            #expect(cache.startFill(passing, lookedUp: true))
            #expect(temporaryFiles(of: cache).count == 2)
            gate.openForever()
            let passed = try await cache.fetch(passing)
            #expect(!passed.isStored)
            #expect(try await passed.body.collect() == origin.body(of: passing.url))
            #expect(try await eventually { cache.withState { $0.flights.isEmpty } })
            #expect(temporaryFiles(of: cache).isEmpty)
            #expect(cache.statistics.publishedFills == 0)
        }
    }

    @Test("close() cancels a fill started ahead and waits for it: nothing is published after it returns")
    func closeCancelsAndAwaitsAFillStartedAhead() async throws {
        let origin = FakeOrigin()
        let key = PatternOrigin.key(3)
        let headGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: headGate), for: key.url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
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
    }

    @Test("a fill started ahead whose origin fails at once ends before it is recorded, and leaves no task behind")
    func aFillThatEndsWhileStartingLeavesNoTask() async throws {
        try await withCache(DeadOrigin()) { (cache: SegmentCache) async throws in
            #expect(cache.startFill(PatternOrigin.key(4)))
            #expect(cache.withState { $0.fillTasks.isEmpty && $0.startingFills.isEmpty && $0.flights.isEmpty })
            await cache.finishFills()
            #expect(cache.statistics.publishedFills == 0)
        }
    }

    @Test("an answer not stored, from a fill started ahead that ended before its fetch came, goes to that fetch")
    func anEndedFillStartedAheadIsClaimedByItsFetch() async throws {
        let origin = FakeOrigin()
        let key = PatternOrigin.key(5)
        origin.setBehaviour(FakeOrigin.Behaviour(cacheable: false), for: key.url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            #expect(cache.startFill(key))
            #expect(try await eventually { cache.withState { $0.flights.isEmpty && $0.endedAhead.count == 1 } })
            let response = try await cache.fetch(key)
            #expect(response.disposition == .miss && !response.isStored)
            #expect(try await response.body.collect() == origin.body(of: key.url))
            #expect(origin.fetchCount(for: key) == 1, "the fetch took the ended fill's answer")
            #expect(cache.withState { $0.endedAhead.isEmpty })
            // The next fetch is a fill of its own: nothing was stored.
            _ = try await cache.fetch(key).body.collect()
            #expect(origin.fetchCount(for: key) == 2)
        }
    }

    @Test(
        "an answer not stored, from a fill started ahead with one viewer's token, is not another viewer's: their fetch of the same key fetches anew, and the first viewer's still takes it"
    )
    func anEndedFillStartedAheadIsNotAnotherViewersAnswer() async throws {
        let origin = FakeOrigin()
        let url = PatternOrigin.key(10).url
        let first = CacheKey(url: url, fetchURL: url + "?token=first")
        let second = CacheKey(url: url, fetchURL: url + "?token=second")
        origin.setBehaviour(FakeOrigin.Behaviour(cacheable: false), for: url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            #expect(cache.startFill(first))
            #expect(try await eventually { cache.withState { $0.flights.isEmpty && $0.endedAhead.count == 1 } })
            let other = try await cache.fetch(second)
            #expect(other.disposition == .miss && !other.isStored)
            #expect(try await other.body.collect() == origin.body(of: url))
            #expect(origin.fetchCount(for: second) == 2, "the second viewer's fetch went to the origin")
            #expect(cache.withState { $0.endedAhead.count == 1 }, "the first viewer's answer is still kept for it")
            let own = try await cache.fetch(first)
            #expect(own.disposition == .miss)
            #expect(try await own.body.collect() == origin.body(of: url))
            #expect(origin.fetchCount(for: first) == 2, "the first viewer took its own fill's answer")
            #expect(cache.withState { $0.endedAhead.isEmpty })
        }
    }

    @Test("a fill started ahead and still in flight is led by its own request's fetch; another viewer's joins it")
    func aFillStartedAheadIsLedByItsOwnRequest() async throws {
        let origin = FakeOrigin()
        let url = PatternOrigin.key(11).url
        let first = CacheKey(url: url, fetchURL: url + "?token=first")
        let second = CacheKey(url: url, fetchURL: url + "?token=second")
        let headGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: headGate), for: url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            #expect(cache.startFill(first))
            async let other = cache.fetch(second)
            #expect(try await eventually { cache.statistics.deduplicatedFills == 1 })
            async let own = cache.fetch(first)
            #expect(try await eventually { cache.withState { $0.startedAhead.isEmpty } })
            headGate.openForever()
            let (joined, led) = try await (other, own)
            #expect(joined.disposition == .joined && led.disposition == .miss)
            #expect(try await joined.body.collect() == origin.body(of: url))
            #expect(try await led.body.collect() == origin.body(of: url))
            #expect(origin.fetchCount(for: first) == 1)
        }
    }

    @Test("a stored answer of a fill started ahead, published before its fetch came, is that fetch's miss")
    func aPublishedFillStartedAheadIsItsFetchsMiss() async throws {
        let origin = FakeOrigin()
        let key = PatternOrigin.key(6)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            #expect(cache.startFill(key))
            #expect(
                try await eventually { cache.statistics.publishedFills == 1 && cache.withState { $0.flights.isEmpty } })
            let first = try await cache.fetch(key)
            #expect(first.disposition == .miss)
            #expect(try await first.body.collect() == origin.body(of: key.url))
            #expect(try await cache.fetch(key).disposition == .hit)
            #expect(cache.statistics.misses == 1 && cache.statistics.hits == 1)
            #expect(origin.fetchCount(for: key) == 1)
        }
    }

    @Test("unclaimed ended fills are kept 5 s at most, and 64 at most, the oldest dropped first")
    func unclaimedEndedFillsAreBounded() {
        var state = CacheState()
        let flights = (0..<70).map { Flight(key: PatternOrigin.key($0)) { _ in } }
        for (index, flight) in flights.enumerated() { state.keepEndedAhead(flight, now: 1_000 + Int64(index)) }
        #expect(state.endedAhead.count == CacheState.endedAheadCapacity)
        #expect(state.claimEndedAhead(flights[0].digest, by: flights[0].key) == nil, "the oldest went first")
        #expect(state.claimEndedAhead(flights[69].digest, by: flights[69].key) === flights[69])
        let late = Flight(key: PatternOrigin.key(99)) { _ in }
        state.keepEndedAhead(late, now: 1_000 + 69 + CacheState.endedAheadMilliseconds)
        #expect(state.endedAhead.count == 1, "those kept 5 s are dropped")
        #expect(state.claimEndedAhead(late.digest, by: late.key) === late)
    }
}
