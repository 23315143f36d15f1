import Foundation
import Glibc
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

@testable import SegmentCache

/// A cache alone on its directory answers a miss from its index; one that shares it looks on disk for the other
/// instances' entries.
@Suite("One instance or several on a directory", .sharedMachine)
struct InstanceWatchTests {
    private static func entryPath(_ key: CacheKey, in directory: CacheDirectory) -> String {
        directory.path + "/" + EntryDigest(key).relativePath
    }

    /// Has `other` fill `key`, then expects `cache` to answer it from that entry, its bytes, without asking `origin`.
    private static func expectHit(
        on key: CacheKey, publishedBy other: SegmentCache, in cache: SegmentCache, askingNot origin: FakeOrigin
    ) async throws {
        _ = try await other.fetch(key).body.collect()
        #expect(try await eventually { other.statistics.publishedFills == 1 })
        let response = try await cache.fetch(key)
        #expect(response.disposition == .hit)
        #expect(TestBytes.equal(try await response.body.collect(), FakeOrigin().body(of: key.url)))
        #expect(origin.fetchCount(for: key) == 0)
    }

    @Test func missOnADirectoryHeldAloneLooksForNoEntryFile() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let files = FaultyFileOperations()
        let origin = FakeOrigin()
        let cache = try SegmentCache(
            configuration: directory.configuration(), source: origin, clock: SystemCacheClock(), operations: files)
        let key = PatternOrigin.key(1)
        _ = try await cache.fetch(key).body.collect()
        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        #expect(!files.pathsLookedUp.contains(Self.entryPath(key, in: directory)))
        // The entry it holds is opened for its hit.
        #expect(try await cache.fetch(key).disposition == .hit)
        #expect(files.pathsLookedUp.contains(Self.entryPath(key, in: directory)))
        await cache.close()
    }

    @Test func missLooksOnDiskOnceAnotherInstanceOpenedTheDirectory() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let files = FaultyFileOperations()
        let cache = try SegmentCache(
            configuration: directory.configuration(), source: FakeOrigin(), clock: SystemCacheClock(),
            operations: files)
        _ = try await cache.fetch(PatternOrigin.key(1)).body.collect()
        let other = try SegmentCache(configuration: directory.configuration(), source: FakeOrigin())
        await other.close()
        // Gone again, but its entries may be there: this instance looks from now on.
        let key = PatternOrigin.key(2)
        _ = try await cache.fetch(key).body.collect()
        #expect(files.pathsLookedUp.contains(Self.entryPath(key, in: directory)))
        await cache.close()
    }

    @Test func entryAnotherInstancePublishesAfterThisOneOpenedIsAHit() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let first = try SegmentCache(configuration: directory.configuration(), source: origin)
        // A miss while alone: answered from the index.
        _ = try await first.fetch(PatternOrigin.key(1)).body.collect()
        #expect(origin.fetchCount(for: PatternOrigin.key(1)) == 1)

        let other = try SegmentCache(configuration: directory.configuration(), source: FakeOrigin())
        try await Self.expectHit(on: PatternOrigin.key(2), publishedBy: other, in: first, askingNot: origin)
        await other.close()
        await first.close()
    }

    @Test func entryOfAnInstanceAliveBeforeThisOneOpenedIsAHit() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let other = try SegmentCache(configuration: directory.configuration(), source: FakeOrigin())
        let origin = FakeOrigin()
        let first = try SegmentCache(configuration: directory.configuration(), source: origin)
        try await Self.expectHit(on: PatternOrigin.key(3), publishedBy: other, in: first, askingNot: origin)
        await other.close()
        await first.close()
    }

    @Test func indexFromASnapshotLooksOnDiskUntilRescanned() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let closed = try SegmentCache(configuration: directory.configuration(), source: FakeOrigin())
        _ = try await closed.fetch(PatternOrigin.key(1)).body.collect()
        // Published before the close, which cancels a publication under way.
        #expect(try await eventually { closed.statistics.publishedFills == 1 })
        await closed.close()
        let files = FaultyFileOperations()
        let cache = try SegmentCache(
            configuration: directory.configuration(), source: FakeOrigin(), clock: SystemCacheClock(),
            operations: files)
        let before = PatternOrigin.key(2)
        _ = try await cache.fetch(before).body.collect()
        #expect(files.pathsLookedUp.contains(Self.entryPath(before, in: directory)))
        cache.performMaintenance(rescan: true)
        let after = PatternOrigin.key(3)
        _ = try await cache.fetch(after).body.collect()
        #expect(!files.pathsLookedUp.contains(Self.entryPath(after, in: directory)))
        await cache.close()
    }

    @Test func eventsNameLockFilesLostEventsAndDirectoriesGoneButNotFills() {
        func event(watch: CInt = 3, mask: UInt32, name: String) -> [UInt8] {
            var name = Array(name.utf8)
            if !name.isEmpty { name += [UInt8](repeating: 0, count: 16 - name.count % 16) }
            var bytes: [UInt8] = []
            withUnsafeBytes(of: watch) { bytes += $0 }
            for field in [mask, 0, UInt32(name.count)] {
                withUnsafeBytes(of: field) { bytes += $0 }
            }
            return bytes + name
        }
        func events(_ bytes: [UInt8]) -> [LockFileWatcher.Event] {
            bytes.withUnsafeBytes { LockFileWatcher.events(in: $0) }
        }
        let created = UInt32(IN_CREATE)
        #expect(events(event(mask: created, name: "1-ab.lock")) == [.lockCreated(watch: 3, name: "1-ab.lock")])
        #expect(events(event(mask: created, name: "1-ab.7.part") + event(mask: created, name: "2-cd.1.part")).isEmpty)
        #expect(
            events(event(mask: created, name: "1-ab.3.part") + event(watch: 5, mask: created, name: "2-cd.lock"))
                == [.lockCreated(watch: 5, name: "2-cd.lock")])
        #expect(
            events(event(mask: UInt32(IN_MOVED_TO), name: "2-cd.lock")) == [.lockCreated(watch: 3, name: "2-cd.lock")])
        #expect(events(event(watch: -1, mask: UInt32(IN_Q_OVERFLOW), name: "")) == [.lost(watch: nil)])
        #expect(events(event(mask: UInt32(IN_DELETE_SELF), name: "")) == [.lost(watch: 3)])
        #expect(events(Array(event(mask: created, name: "1-ab.7.part").dropLast(4))) == [.lost(watch: nil)])
        #expect(events(Array(event(mask: created, name: "1-ab.lock").prefix(10))) == [.lost(watch: nil)])
        #expect(events([]).isEmpty)
    }

    @Test func cachesInOneProcessShareOneWatchOfTheirDirectory() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        // Far more caches than inotify instances a user may have (128 by default): one instance serves them all.
        let others = (0..<3).map { _ in CacheDirectory() }
        defer { for other in others { other.remove() } }
        var caches: [SegmentCache] = []
        for other in others {
            for _ in 0..<70 {
                caches.append(try SegmentCache(configuration: other.configuration(), source: FakeOrigin()))
            }
        }
        let origin = FakeOrigin()
        let files = FaultyFileOperations()
        let alone = try SegmentCache(
            configuration: directory.configuration(), source: origin, clock: SystemCacheClock(), operations: files)
        let key = PatternOrigin.key(4)
        _ = try await alone.fetch(key).body.collect()
        #expect(!files.pathsLookedUp.contains(Self.entryPath(key, in: directory)))
        for cache in caches { await cache.close() }
        await alone.close()
    }
}
