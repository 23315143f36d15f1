import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import SegmentCache
import Testing

@Suite("Finishing fills before close", .sharedMachine)
struct FinishFillsTests {
    @Test func everyDrainedFillIsPublishedAfterFinishFillsAndSurvivesClose() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let (origin, keys) = EvictionTests.origin(count: 20, size: 50_000)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        for key in keys { _ = try await cache.fetch(key).body.collect() }
        await cache.finishFills()
        #expect(cache.statistics.publishedFills == 20)
        for key in keys { #expect(cache.cachedEntry(for: key) != nil, "\(key) not published") }
        await cache.close()

        let reopened = try SegmentCache(configuration: directory.configuration(), source: origin)
        for key in keys {
            let response = try await reopened.fetch(key)
            #expect(response.disposition == .hit)
            #expect(try await response.body.collect() == origin.body(of: key.url))
        }
        #expect(keys.allSatisfy { origin.fetchCount(for: $0) == 1 })
        await reopened.close()
    }

    @Test("closing the cache keeps a fill whose every announced byte is in: its readers have the whole body")
    func closeKeepsAFillWhoseBodyIsWhole() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(3)
        let end = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(endGate: end), for: key.url)
        let whole = origin.body(of: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        let response = try await cache.fetch(key)
        // Every byte read; the origin's stream has not said it has ended when the cache closes.
        var bytes: [UInt8] = []
        var iterator = response.body.makeAsyncIterator()
        while bytes.count < whole.count, let chunk = try await iterator.next() { bytes += chunk }
        #expect(bytes == whole)
        await cache.close()
        #expect(cache.statistics.publishedFills == 1, "\(cache.statistics)")

        let reopened = try SegmentCache(configuration: directory.configuration(), source: origin)
        let again = try await reopened.fetch(key)
        #expect(again.disposition == .hit)
        #expect(try await again.body.collect() == whole)
        #expect(origin.fetchCount(for: key) == 1)
        await reopened.close()
    }

    @Test("closing the cache drops a fill whose body is not all in: never kept cut")
    func closeDropsAFillCutShort() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(4)
        let chunks = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(chunkSize: 10_000, chunkGate: chunks), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        chunks.open(2)
        let response = try await cache.fetch(key)
        var bytes: [UInt8] = []
        var iterator = response.body.makeAsyncIterator()
        while bytes.count < 20_000, let chunk = try await iterator.next() { bytes += chunk }
        await cache.close()
        chunks.openForever()
        #expect(cache.statistics.publishedFills == 0, "\(cache.statistics)")
        let reopened = try SegmentCache(configuration: directory.configuration(), source: DeadOrigin())
        #expect(reopened.cachedEntry(for: key) == nil)
        await reopened.close()
    }
}
