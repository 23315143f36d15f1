import Foundation
import Glibc
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

@testable import SegmentCache

/// The cache's verdict (``SegmentCache/lookup(_:freshness:start:refreshingStored:hitLookedFor:)``): a hit, a fill joined or
/// started, or a stored entry left to the caller, decided and counted in one step. Fills started at once run on the
/// caller's thread until they first wait, and are recorded afterwards, outside the lock: `close()` must still find
/// them, and one that ended first must not stay. A fill's answer is its verdict holder's, even once it has ended.
@Suite("Cache verdicts", .sharedMachine)
struct CacheVerdictTests {
    /// Looks `key` up as the server's event loop does: a fill started at once, a stored entry left alone.
    private func lookUpAtOnce(_ cache: SegmentCache, _ key: CacheKey) throws -> CacheVerdict {
        try cache.lookup(key, freshness: .fresh, start: .immediate(executorPreference: nil), refreshingStored: false)
    }

    /// The fill of a verdict that must be one, led by the lookup.
    private func ledFill(_ verdict: CacheVerdict) -> CacheFill? {
        guard case .fill(let fill) = verdict, fill.leads else { return nil }
        return fill
    }

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
        "a fill started at once writes the temporary file made while its origin request was in flight, and publishes it"
    )
    func aFillStartedAheadWritesItsPreparedFile() async throws {
        let origin = FakeOrigin()
        let key = PatternOrigin.key(7)
        let headGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: headGate), for: key.url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            #expect(ledFill(try lookUpAtOnce(cache, key)) != nil)
            // Made before the lookup returned, while the origin holds the answer.
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
            #expect(ledFill(try lookUpAtOnce(cache, failing)) != nil)
            let verdict = try lookUpAtOnce(cache, passing)
            #expect(ledFill(verdict) != nil)
            #expect(temporaryFiles(of: cache).count == 2)
            gate.openForever()
            let passed = try await cache.fetch(passing, freshness: .fresh, from: verdict)
            #expect(!passed.isStored)
            #expect(try await passed.body.collect() == origin.body(of: passing.url))
            #expect(try await eventually { cache.withState { $0.flights.isEmpty } })
            #expect(temporaryFiles(of: cache).isEmpty)
            #expect(cache.statistics.publishedFills == 0)
        }
    }

    @Test("close() cancels a fill started at once and waits for it: nothing is published after it returns")
    func closeCancelsAndAwaitsAFillStartedAhead() async throws {
        let origin = FakeOrigin()
        let key = PatternOrigin.key(3)
        let headGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: headGate), for: key.url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            #expect(ledFill(try lookUpAtOnce(cache, key)) != nil)
            #expect(origin.fetchCount(for: key) == 1)
            #expect(cache.withState { $0.fillTasks.count == 1 && $0.fillTasks.values.allSatisfy { $0.task != nil } })
            let closing = Task { await cache.close() }
            #expect(try await eventually { cache.withState { $0.isClosed } })
            headGate.openForever()
            await closing.value
            #expect(cache.statistics.publishedFills == 0)
            #expect(cache.withState { $0.fillTasks.isEmpty && $0.flights.isEmpty })
        }
    }

    @Test("a fill started at once whose origin fails at once ends before it is recorded, and leaves no task behind")
    func aFillThatEndsWhileStartingLeavesNoTask() async throws {
        try await withCache(DeadOrigin()) { (cache: SegmentCache) async throws in
            #expect(ledFill(try lookUpAtOnce(cache, PatternOrigin.key(4))) != nil)
            #expect(cache.withState { $0.fillTasks.isEmpty && $0.flights.isEmpty })
            await cache.finishFills()
            #expect(cache.statistics.publishedFills == 0)
        }
    }

    @Test("an answer not stored, from a fill that ended before its verdict's holder asked for it, goes to that holder")
    func anEndedFillIsItsVerdictsAnswer() async throws {
        let origin = FakeOrigin()
        let key = PatternOrigin.key(5)
        origin.setBehaviour(FakeOrigin.Behaviour(cacheable: false), for: key.url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            let verdict = try lookUpAtOnce(cache, key)
            #expect(ledFill(verdict) != nil)
            #expect(try await eventually { cache.withState { $0.flights.isEmpty } })
            let response = try await cache.fetch(key, freshness: .fresh, from: verdict)
            #expect(response.disposition == .miss && !response.isStored)
            #expect(try await response.body.collect() == origin.body(of: key.url))
            #expect(origin.fetchCount(for: key) == 1, "the fetch took the ended fill's answer")
            // The next fetch is a fill of its own: nothing was stored.
            _ = try await cache.fetch(key).body.collect()
            #expect(origin.fetchCount(for: key) == 2)
        }
    }

    @Test(
        "an answer not stored, from a fill started with one viewer's token, is not another viewer's: their fetch of the same key fetches anew, and the first viewer's still takes it"
    )
    func anEndedFillIsNotAnotherViewersAnswer() async throws {
        let origin = FakeOrigin()
        let url = PatternOrigin.key(10).url
        let first = CacheKey(url: url, fetchURL: url + "?token=first")
        let second = CacheKey(url: url, fetchURL: url + "?token=second")
        origin.setBehaviour(FakeOrigin.Behaviour(cacheable: false), for: url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            let verdict = try lookUpAtOnce(cache, first)
            #expect(ledFill(verdict) != nil)
            #expect(try await eventually { cache.withState { $0.flights.isEmpty } })
            let other = try await cache.fetch(second)
            #expect(other.disposition == .miss && !other.isStored)
            #expect(try await other.body.collect() == origin.body(of: url))
            #expect(origin.fetchCount(for: second) == 2, "the second viewer's fetch went to the origin")
            let own = try await cache.fetch(first, freshness: .fresh, from: verdict)
            #expect(own.disposition == .miss)
            #expect(try await own.body.collect() == origin.body(of: url))
            #expect(origin.fetchCount(for: first) == 2, "the first viewer took its own fill's answer")
        }
    }

    @Test("a fill started at once and still in flight is led by its own request; another viewer's joins it")
    func aFillStartedAtOnceIsLedByItsOwnRequest() async throws {
        let origin = FakeOrigin()
        let url = PatternOrigin.key(11).url
        let first = CacheKey(url: url, fetchURL: url + "?token=first")
        let second = CacheKey(url: url, fetchURL: url + "?token=second")
        let headGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: headGate), for: url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            let verdict = try lookUpAtOnce(cache, first)
            #expect(ledFill(verdict) != nil)
            async let other = cache.fetch(second)
            #expect(try await eventually { cache.statistics.deduplicatedFills == 1 })
            async let own = cache.fetch(first, freshness: .fresh, from: verdict)
            headGate.openForever()
            let (joined, led) = try await (other, own)
            #expect(joined.disposition == .joined && led.disposition == .miss)
            #expect(try await joined.body.collect() == origin.body(of: url))
            #expect(try await led.body.collect() == origin.body(of: url))
            #expect(origin.fetchCount(for: first) == 1)
        }
    }

    @Test("a stored answer of a fill, published before its verdict's holder asked for it, is that holder's miss")
    func aPublishedFillIsItsVerdictsMiss() async throws {
        let origin = FakeOrigin()
        let key = PatternOrigin.key(6)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            let verdict = try lookUpAtOnce(cache, key)
            #expect(ledFill(verdict) != nil)
            #expect(
                try await eventually { cache.statistics.publishedFills == 1 && cache.withState { $0.flights.isEmpty } })
            let first = try await cache.fetch(key, freshness: .fresh, from: verdict)
            #expect(first.disposition == .miss)
            #expect(try await first.body.collect() == origin.body(of: key.url))
            #expect(try await cache.fetch(key).disposition == .hit)
            #expect(cache.statistics.misses == 1 && cache.statistics.hits == 1)
            #expect(origin.fetchCount(for: key) == 1)
        }
    }

    @Test("one lookup decides and counts: a hit, a fill joined, a stored entry left alone or refreshed, a refusal")
    func oneLookupDecides() async throws {
        let origin = FakeOrigin()
        let key = PatternOrigin.key(12)
        let headGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: headGate), for: key.url)
        let directory = CacheDirectory()
        defer { directory.remove() }
        var configuration = directory.configuration()
        configuration.maxFills = 1
        let cache = try SegmentCache(configuration: configuration, source: origin)
        let leader = try lookUpAtOnce(cache, key)
        #expect(ledFill(leader) != nil)
        #expect(cache.statistics.misses == 1)
        guard case .fill(let joined) = try cache.lookup(key) else {
            Issue.record("a fill in flight is joined")
            return
        }
        #expect(!joined.leads && cache.statistics.deduplicatedFills == 1)
        #expect(throws: CacheError.self, "past maxFills a lookup that must start a fill is refused") {
            try cache.lookup(PatternOrigin.key(13))
        }
        #expect(cache.statistics.fillsRefused == 1)
        headGate.openForever()
        _ = try await cache.fetch(key, freshness: .fresh, from: leader).body.collect()
        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        guard case .hit(let hit) = try cache.lookup(key) else {
            Issue.record("a published entry is a hit")
            return
        }
        #expect(hit.disposition == .hit && cache.statistics.hits == 1)
        cache.invalidate(key)
        await cache.close()
    }

    @Test("a lookup told the hit was looked for does not look again: a published entry is stored, none is a fill")
    func hitLookedForIsTakenAsGiven() async throws {
        let origin = FakeOrigin()
        let key = PatternOrigin.key(15)
        // The head waits until the fill has been joined: a fill that ran at once could be published by then.
        let headGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: headGate), for: key.url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            func lookUp() throws -> CacheVerdict {
                try cache.lookup(
                    key, freshness: .fresh, start: .immediate(executorPreference: nil), refreshingStored: false,
                    hitLookedFor: true)
            }
            let first = try lookUp()
            #expect(ledFill(first) != nil, "no entry: a fill started")
            guard case .fill(let joined) = try lookUp() else {
                Issue.record("a fill in flight is joined")
                return
            }
            #expect(!joined.leads)
            headGate.openForever()
            _ = try await cache.fetch(key, freshness: .fresh, from: first).body.collect()
            #expect(try await eventually { cache.statistics.publishedFills == 1 })
            let hitsBefore = cache.statistics.hits
            guard case .stored = try lookUp() else {
                Issue.record("a published entry, its hit taken as looked for, is the caller's")
                return
            }
            #expect(cache.statistics.hits == hitsBefore, "no hit counted: none was looked for")
            #expect(origin.fetchCount(for: key) == 1)
        }
    }

    @Test("an expired entry is left to the caller when asked, and refreshed otherwise")
    func anExpiredEntryIsTheCallersOrRefreshed() async throws {
        let origin = FakeOrigin()
        let key = PatternOrigin.key(14)
        origin.setBehaviour(FakeOrigin.Behaviour(expiry: Date(timeIntervalSinceNow: -10)), for: key.url)
        try await withCache(origin) { (cache: SegmentCache) async throws in
            _ = try await cache.fetch(key).body.collect()
            #expect(try await eventually { cache.statistics.publishedFills == 1 })
            guard case .stored = try lookUpAtOnce(cache, key) else {
                Issue.record("an expired entry, not to be refreshed, is the caller's")
                return
            }
            #expect(origin.fetchCount(for: key) == 1, "nothing was started for it")
            guard case .fill(let refresh) = try cache.lookup(key, freshness: .fresh) else {
                Issue.record("an expired entry is refreshed by a fresh lookup")
                return
            }
            #expect(refresh.leads)
            _ = try await refresh.response().body.collect()
            #expect(origin.fetchCount(for: key) == 2)
        }
    }

    @Test("an expired entry another instance published is the caller's too, though this instance's index lacks it")
    func anotherInstancesExpiredEntryIsTheCallers() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let key = PatternOrigin.key(15)
        let origin = FakeOrigin()
        origin.setBehaviour(FakeOrigin.Behaviour(expiry: Date(timeIntervalSinceNow: -10)), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: FakeOrigin())
        let other = try SegmentCache(configuration: directory.configuration(), source: origin)
        _ = try await other.fetch(key).body.collect()
        #expect(try await eventually { other.statistics.publishedFills == 1 })
        guard case .stored = try lookUpAtOnce(cache, key) else {
            Issue.record("an expired entry on disk is left to the caller's grace, not refreshed over")
            await other.close()
            await cache.close()
            return
        }
        await other.close()
        await cache.close()
    }
}
