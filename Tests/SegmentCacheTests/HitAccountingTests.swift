import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

@testable import SegmentCache

/// A hit marks its entry used; an entry the index does not know is counted only while its file is still there, so
/// the bytes the cache counts never include an entry evicted between a hit's lookup and its bookkeeping.
@Suite("Hit accounting", .sharedMachine)
struct HitAccountingTests {
    @Test("a hit on an entry removed after it was opened does not count the entry again")
    func aHitOnAnEntryRemovedSinceItWasOpenedIsNotCounted() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(1)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        _ = try await cache.fetch(key).body.collect()
        // The entry is counted when its room is reserved, just before its file is renamed into place: wait for the
        // file (a loaded machine once opened it in between, and found nothing yet).
        var opened: StoredEntry?
        #expect(
            try await eventually {
                opened = cache.openEntry(EntryDigest(key), expecting: key)
                return opened != nil
            })
        let entry = try #require(opened)
        #expect(cache.statistics.entries == 1)

        #expect(cache.purge(url: key.url) == 1)
        cache.noteHit(entry, at: .now)

        #expect(cache.statistics.entries == 0)
        #expect(cache.statistics.bytes == 0)
        #expect(directory.entryBytes == 0)
        await cache.close()
    }

    @Test("a hit on an entry another cache on the same directory published is counted")
    func aHitOnAnEntryPublishedElsewhereIsCounted() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(2)
        let reader = try SegmentCache(configuration: directory.configuration(), source: origin)
        let writer = try SegmentCache(configuration: directory.configuration(), source: origin)
        _ = try await writer.fetch(key).body.collect()
        #expect(try await eventually { writer.statistics.entries == 1 })
        await writer.close()

        let hit = try #require(reader.publishedResponse(for: key))
        #expect(hit.disposition == .hit)
        #expect(reader.statistics.entries == 1)
        #expect(reader.statistics.bytes == directory.entryBytes)
        await reader.close()
    }

    @Test("an entry opened before any removal is not adopted: it may be the one removed")
    func adoptionAfterARemovalIsRefused() {
        var state = CacheState()
        let kept = EntryDigest(PatternOrigin.key(3))
        let opened = EntryDigest(PatternOrigin.key(4))
        state.addEntry(kept, size: 100, lastAccess: 1, range: nil)
        let known = state.touch(opened, at: 2)
        #expect(!known)
        let removalsBefore = state.removals

        state.removeEntry(kept)
        state.adopt(opened, size: 200, at: 2, ifNoRemovalSince: removalsBefore)
        #expect(!state.index.contains(opened))

        state.adopt(opened, size: 200, at: 3, ifNoRemovalSince: state.removals)
        #expect(state.index.contains(opened))
        #expect(state.index.totalBytes == 200)
    }
}
