import Foundation
import HLSCacheTesting
import Testing

@testable import SegmentCache

/// What is made durable before it is published: every entry under `.beforePublish`, except those their source
/// says nobody will serve after a power loss.
@Suite("Durability")
struct DurabilityTests {
    @Test("an entry is synced before it is published, unless its source says it need not survive a power loss")
    func onlyDurableEntriesAreSynced() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let durable = PatternOrigin.key(40)
        let fleeting = PatternOrigin.key(41)
        origin.setBehaviour(FakeOrigin.Behaviour(durable: false), for: fleeting.url)
        let files = FaultyFileOperations()
        var configuration = directory.configuration()
        configuration.sync = .beforePublish
        let cache = try SegmentCache(
            configuration: configuration, source: origin, clock: SystemCacheClock(), operations: files)

        #expect(try await cache.fetch(durable).body.collect() == origin.body(of: durable.url))
        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        #expect(files.synchronizeCount == 1)

        #expect(try await cache.fetch(fleeting).body.collect() == origin.body(of: fleeting.url))
        #expect(try await eventually { cache.statistics.publishedFills == 2 })
        #expect(files.synchronizeCount == 1, "the fleeting entry was synced")
        // Published all the same.
        #expect(try await cache.fetch(fleeting).disposition == .hit)
        #expect(origin.fetchCount(for: fleeting) == 1)
    }
}
