import Foundation
import HLSCacheTestTraits
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
}
