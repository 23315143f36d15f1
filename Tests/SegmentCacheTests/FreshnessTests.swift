import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import SegmentCache
import Testing

@Suite("Freshness", .sharedMachine)
struct FreshnessTests {
    @Test func metadataAndExpirySurviveARestart() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let origin = FakeOrigin()
        let key = CacheKey(url: "https://origin.test/live/index.m3u8")
        origin.setBody(Array("#EXTM3U\n".utf8), for: key.url)
        let expiry = clock.now().addingTimeInterval(6)
        origin.setBehaviour(FakeOrigin.Behaviour(expiry: expiry, etag: "\"v1\""), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin, clock: clock)
        _ = try await cache.fetch(key).body.collect()
        // Published before the close, which cancels a publication under way.
        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        await cache.close()

        let reopened = try SegmentCache(configuration: directory.configuration(), source: DeadOrigin(), clock: clock)
        let entry = try #require(reopened.cachedEntry(for: key))
        #expect(entry.metadata.key == key)
        #expect(entry.metadata.expiry == expiry)
        #expect(entry.metadata.etag == "\"v1\"")
        #expect(entry.metadata.lastModified == "Tue, 01 Jul 2025 10:00:00 GMT")
        #expect(entry.metadata.contentType == "video/mp2t")
        #expect(entry.metadata.fetchedAt == clock.now())
        #expect(try await entry.body.collect() == Array("#EXTM3U\n".utf8))
        await reopened.close()
    }

    @Test("a request that waited for a fill takes the version fetched since it arrived, expired or not; others do not")
    func fetchedSinceTakesTheVersionWaitedFor() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let origin = FakeOrigin()
        let key = PatternOrigin.key(40)
        let arrived = clock.now()
        clock.advance(by: 1)
        origin.setBehaviour(FakeOrigin.Behaviour(expiry: clock.now().addingTimeInterval(1)), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin, clock: clock)
        _ = try await cache.fetch(key, freshness: .fresh).body.collect()
        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        clock.advance(by: 5)
        var lease: SegmentCache.HitLease?
        #expect(cache.publishedResponse(for: key, lease: &lease, accepting: { _ in true }) == nil)
        #expect(
            cache.publishedResponse(for: key, lease: &lease, fetchedSince: arrived, accepting: { _ in true }) != nil)
        // A version fetched before the request arrived is not the one it waited for.
        #expect(
            cache.publishedResponse(
                for: key, lease: &lease, fetchedSince: clock.now().addingTimeInterval(-1), accepting: { _ in true })
                == nil)
        await cache.close()
    }

    @Test func freshRequestFetchesAnExpiredEntryAgainAndStaleEntryFindsIt() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let origin = FakeOrigin()
        let key = PatternOrigin.key(40)
        origin.setBehaviour(FakeOrigin.Behaviour(expiry: clock.now().addingTimeInterval(10)), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin, clock: clock)
        _ = try await cache.fetch(key, freshness: .fresh).body.collect()
        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        #expect(try await cache.fetch(key, freshness: .fresh).disposition == .hit)
        #expect(cache.staleEntry(for: key) == nil)

        clock.advance(by: 11)
        #expect(cache.staleEntry(for: key) != nil)
        #expect(try await cache.fetch(key, freshness: .any).disposition == .hit)
        origin.setBehaviour(FakeOrigin.Behaviour(expiry: clock.now().addingTimeInterval(10)), for: key.url)
        let refreshed = try await cache.fetch(key, freshness: .fresh)
        #expect(refreshed.disposition == .miss)
        _ = try await refreshed.body.collect()
        #expect(try await eventually { cache.statistics.publishedFills == 2 })
        #expect(cache.staleEntry(for: key) == nil)
        #expect(origin.fetchCount(for: key) == 2)
        #expect(cache.statistics.entries == 1)
        await cache.close()
    }

    @Test func updatedExpiryMakesTheEntryFreshAndPersists() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let origin = FakeOrigin()
        let key = PatternOrigin.key(41)
        origin.setBehaviour(FakeOrigin.Behaviour(expiry: clock.now().addingTimeInterval(2)), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin, clock: clock)
        _ = try await cache.fetch(key).body.collect()
        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        clock.advance(by: 5)
        #expect(cache.staleEntry(for: key) != nil)

        let newExpiry = clock.now().addingTimeInterval(30)
        #expect(cache.updateExpiry(newExpiry, for: key))
        #expect(try await cache.fetch(key, freshness: .fresh).disposition == .hit)
        #expect(!cache.updateExpiry(newExpiry, for: PatternOrigin.key(42)))
        await cache.close()

        let reopened = try SegmentCache(configuration: directory.configuration(), source: DeadOrigin(), clock: clock)
        let entry = try #require(reopened.cachedEntry(for: key))
        #expect(entry.metadata.expiry == newExpiry)
        #expect(try await entry.body.collect() == origin.body(of: key.url))
        await reopened.close()
    }

    @Test func invalidatedEntryIsFetchedAgain() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(43)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        _ = try await cache.fetch(key).body.collect()
        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        cache.invalidate(key)
        #expect(cache.cachedEntry(for: key) == nil)
        #expect(directory.entryFiles.isEmpty)
        #expect(try await cache.fetch(key).disposition == .miss)
        await cache.close()
    }

    @Test func fillInvalidatedWhileRunningServesItsReadersButIsNotPublished() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(44)
        let chunkGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(chunkGate: chunkGate), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        let response = try await cache.fetch(key)
        cache.invalidate(key)
        chunkGate.openForever()
        #expect(try await response.body.collect() == origin.body(of: key.url))
        #expect(try await eventually { cache.statistics.passThroughFills == 1 })
        #expect(directory.entryFiles.isEmpty)
        await cache.close()
    }
}
