import Foundation
import Glibc
import HLSCacheTesting
import Testing

@testable import SegmentCache

/// A cache alone on its directory answers a miss from its index; one that shares it looks on disk for the other
/// instances' entries.
@Suite("One instance or several on a directory")
struct InstanceWatchTests {
    private static func entryPath(_ key: CacheKey, in directory: CacheDirectory) -> String {
        directory.path + "/" + EntryDigest(key).relativePath
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
        let key = PatternOrigin.key(2)
        _ = try await other.fetch(key).body.collect()
        #expect(try await eventually { other.statistics.publishedFills == 1 })
        let response = try await first.fetch(key)
        #expect(response.disposition == .hit)
        #expect(TestBytes.equal(try await response.body.collect(), FakeOrigin().body(of: key.url)))
        #expect(origin.fetchCount(for: key) == 0)
        await other.close()
        await first.close()
    }

    @Test func entryOfAnInstanceAliveBeforeThisOneOpenedIsAHit() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let other = try SegmentCache(configuration: directory.configuration(), source: FakeOrigin())
        let origin = FakeOrigin()
        let first = try SegmentCache(configuration: directory.configuration(), source: origin)
        let key = PatternOrigin.key(3)
        _ = try await other.fetch(key).body.collect()
        #expect(try await eventually { other.statistics.publishedFills == 1 })
        #expect(try await first.fetch(key).disposition == .hit)
        #expect(origin.fetchCount(for: key) == 0)
        await other.close()
        await first.close()
    }

    @Test func indexFromASnapshotLooksOnDiskUntilRescanned() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let closed = try SegmentCache(configuration: directory.configuration(), source: FakeOrigin())
        _ = try await closed.fetch(PatternOrigin.key(1)).body.collect()
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

    @Test func eventsNameOtherInstancesLocksLostEventsAndNotFills() {
        func event(mask: UInt32, name: String) -> [UInt8] {
            var name = Array(name.utf8)
            if !name.isEmpty { name += [UInt8](repeating: 0, count: 16 - name.count % 16) }
            var bytes: [UInt8] = []
            for field in [UInt32(1), mask, 0, UInt32(name.count)] {
                withUnsafeBytes(of: field.littleEndian) { bytes += $0 }
            }
            return bytes + name
        }
        func others(_ bytes: [UInt8]) -> Bool {
            bytes.withUnsafeBytes { InstanceWatch.events(in: $0, ownLockName: "1-ab.lock") }
        }
        let created = UInt32(IN_CREATE)
        #expect(!others(event(mask: created, name: "1-ab.lock")))
        #expect(!others(event(mask: created, name: "1-ab.7.part") + event(mask: created, name: "2-cd.1.part")))
        #expect(others(event(mask: created, name: "1-ab.3.part") + event(mask: created, name: "2-cd.lock")))
        #expect(others(event(mask: UInt32(IN_MOVED_TO), name: "2-cd.lock")))
        #expect(others(event(mask: UInt32(IN_Q_OVERFLOW), name: "")))
        #expect(others(event(mask: UInt32(IN_DELETE_SELF), name: "")))
        #expect(others(Array(event(mask: created, name: "1-ab.7.part").dropLast(4))))
        #expect(!others([]))
    }
}
