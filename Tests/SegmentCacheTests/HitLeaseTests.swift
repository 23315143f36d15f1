import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import SegmentCache
import Testing

/// A hit found through the hot path comes with a lease on which the caller may answer the same hit again without a
/// lookup; the lease must end whenever that lookup could find something else: a change to the entries held open,
/// the entry's expiry, or the end of the recheck window.
@Suite("Hit leases", .sharedMachine)
struct HitLeaseTests {
    static let key = HeldEntryTests.key

    /// A hit's lease: the first hit opens the entry (no lease), the second finds it held and checked.
    static func leasedHit(_ cache: SegmentCache) throws -> SegmentCache.HitLease {
        var lease: SegmentCache.HitLease?
        #expect(cache.publishedResponse(for: key, lease: &lease, accepting: { _ in true }) != nil)
        #expect(cache.publishedResponse(for: key, lease: &lease, accepting: { _ in true }) != nil)
        return try #require(lease)
    }

    /// Runs `body` with a cache holding ``key``'s entry, fresh for `seconds` by `clock`, checked every `recheck`.
    static func withFilledCache(
        fresh seconds: TimeInterval, recheck: Duration, _ body: (SegmentCache, ManualClock) async throws -> Void
    ) async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let cache = try HeldEntryTests.cache(
            directory, body: Array("v1".utf8), fresh: seconds, clock: clock, recheck: recheck)
        try await HeldEntryTests.fill(cache)
        try await body(cache, clock)
        await cache.close()
    }

    @Test("a lease holds and counts a hit while the entry is fresh; its expiry ends it")
    func leaseHoldsUntilExpiry() async throws {
        try await Self.withFilledCache(fresh: 10, recheck: .seconds(60)) { cache, clock in
            let lease = try Self.leasedHit(cache)
            let hits = cache.statistics.hits
            #expect(cache.renewedHit(lease))
            #expect(cache.renewedHit(lease))
            #expect(cache.statistics.hits == hits + 2)
            clock.advance(by: 11)
            #expect(!cache.renewedHit(lease), "a lease outlived its entry's freshness")
            #expect(cache.statistics.hits == hits + 2)
        }
    }

    @Test("a lease ends when its entry is removed, purged or given another expiry; another key's entry leaves it")
    func leaseEndsWithItsEntryOnly() async throws {
        try await Self.withFilledCache(fresh: 100, recheck: .seconds(60)) { cache, clock in
            let removed = try Self.leasedHit(cache)
            cache.invalidate(Self.key)
            #expect(!cache.renewedHit(removed), "a lease outlived its entry's removal")

            try await HeldEntryTests.fill(cache)
            let purged = try Self.leasedHit(cache)
            #expect(cache.renewedHit(purged))
            #expect(cache.purge(url: Self.key.url) == 1)
            #expect(!cache.renewedHit(purged), "a lease outlived a purge")

            try await HeldEntryTests.fill(cache)
            let rewritten = try Self.leasedHit(cache)
            #expect(cache.updateExpiry(clock.now().addingTimeInterval(5), for: Self.key))
            #expect(!cache.renewedHit(rewritten), "a lease outlived its entry's expiry rewritten")

            // Another key's entry, held open by its own hits, is no change to this one.
            try await HeldEntryTests.fill(cache)
            let kept = try Self.leasedHit(cache)
            let other = PatternOrigin.key(7)
            _ = try await cache.fetch(other).body.collect()
            #expect(try await eventually { cache.publishedResponse(for: other) != nil })
            #expect(cache.publishedResponse(for: other) != nil)
            #expect(cache.renewedHit(kept), "another key's entry ended the lease")
        }
    }

    @Test("a lease ends with the recheck window of the check it came from")
    func leaseEndsWithTheRecheckWindow() async throws {
        try await Self.withFilledCache(fresh: 100, recheck: .milliseconds(100)) { cache, clock in
            let lease = try Self.leasedHit(cache)
            try await Task.sleep(for: .milliseconds(150))
            #expect(!cache.renewedHit(lease), "a lease outlived its recheck window")
        }
    }
}
