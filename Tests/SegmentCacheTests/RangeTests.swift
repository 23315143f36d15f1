import ByteRanges
import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import SegmentCache
import Testing

@Suite("Ranged objects", .sharedMachine)
struct RangeTests {
    @Test func rangeInsideACachedWholeObjectIsServedFromIt() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let whole = PatternOrigin.key(20)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        _ = try await cache.fetch(whole).body.collect()
        #expect(try await eventually { cache.statistics.publishedFills == 1 })

        let range = try #require(ByteRange(offset: 1_000, length: 5_000))
        let response = try await cache.fetch(CacheKey(url: whole.url, range: range))
        #expect(response.disposition == .hit)
        #expect(response.metadata.contentLength == 5_000)
        #expect(try await response.body.collect() == Array(origin.body(of: whole.url)[1_000..<6_000]))
        let region = try #require(response.withFileRegion { $0 })
        #expect(region.length == 5_000)
        #expect(origin.totalFetches == 1)
        await cache.close()
    }

    @Test func rangeInsideACachedRangedObjectIsServedFromIt() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let url = PatternOrigin.key(21).url
        let outer = try #require(ByteRange(offset: 10_000, length: 40_000))
        let inner = try #require(ByteRange(offset: 12_000, length: 3_000))
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        let stored = try await cache.fetch(CacheKey(url: url, range: outer))
        #expect(try await stored.body.collect() == Array(origin.body(of: url)[10_000..<50_000]))
        #expect(try await eventually { cache.statistics.publishedFills == 1 })

        let response = try await cache.fetch(CacheKey(url: url, range: inner))
        #expect(response.disposition == .hit)
        #expect(try await response.body.collect() == Array(origin.body(of: url)[12_000..<15_000]))
        #expect(origin.totalFetches == 1)
        await cache.close()

        // After a restart the directory scan alone tells which entries are ranges of the URL.
        let reopened = try SegmentCache(configuration: directory.configuration(), source: DeadOrigin())
        let again = try #require(reopened.cachedEntry(for: CacheKey(url: url, range: inner)))
        #expect(try await again.body.collect() == Array(origin.body(of: url)[12_000..<15_000]))
        await reopened.close()
    }

    @Test func rangeNotInsideAnyEntryIsFetchedAsItsOwnObject() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let url = PatternOrigin.key(22).url
        let first = try #require(ByteRange(offset: 0, length: 1_000))
        let overlapping = try #require(ByteRange(offset: 500, length: 1_000))
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        _ = try await cache.fetch(CacheKey(url: url, range: first)).body.collect()
        let response = try await cache.fetch(CacheKey(url: url, range: overlapping))
        #expect(response.disposition == .miss)
        #expect(try await response.body.collect() == Array(origin.body(of: url)[500..<1_500]))
        #expect(origin.totalFetches == 2)
        await cache.close()
    }

    @Test func subRangeOfAResponseForHTTPRangeRequests() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(23)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        let expected = origin.body(of: key.url)

        // While filling (the bytes stream from the flight) and once published (from the file).
        let miss = try await cache.fetch(key)
        let range = try #require(ByteRange(offset: 7, length: 20_000))
        #expect(try await miss.body(range: range).collect() == Array(expected[7..<20_007]))
        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        let hit = try await cache.fetch(key)
        #expect(try await hit.body(range: range).collect() == Array(expected[7..<20_007]))

        let outside = try #require(ByteRange(offset: Int64(expected.count) - 10, length: 20))
        #expect(throws: CacheError.self) { _ = try hit.body(range: outside) }
        await cache.close()
    }
}
