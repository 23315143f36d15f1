import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import SegmentCache
import Testing

@Suite("Eviction", .sharedMachine)
struct EvictionTests {
    /// An origin serving `count` objects of `size` bytes at `https://origin.test/e/<i>.ts`.
    static func origin(count: Int, size: Int) -> (FakeOrigin, [CacheKey]) {
        let origin = FakeOrigin()
        let keys = (0..<count).map { CacheKey(url: "https://origin.test/e/\($0).ts") }
        for (index, key) in keys.enumerated() {
            origin.setBody((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }, for: key.url)
        }
        return (origin, keys)
    }

    @Test func totalStaysWithinMaxBytesUnderChurn() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let (origin, keys) = Self.origin(count: 40, size: 60_000)
        let maxBytes: Int64 = 500_000
        let cache = try SegmentCache(configuration: directory.configuration(maxBytes: maxBytes), source: origin)

        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var generator = SystemRandomNumberGenerator()
                    for _ in 0..<60 {
                        let key = keys[Int.random(in: 0..<keys.count, using: &generator)]
                        let body = try await cache.fetch(key).body.collect()
                        #expect(body == origin.body(of: key.url), "worker \(worker)")
                        #expect(cache.statistics.bytes <= maxBytes)
                        #expect(directory.entryBytes <= maxBytes)
                    }
                }
            }
            try await group.waitForAll()
        }
        let statistics = cache.statistics
        #expect(statistics.evictions > 0)
        #expect(statistics.bytes <= maxBytes)
        #expect(directory.entryBytes <= maxBytes)
        #expect(directory.entryBytes == statistics.bytes)
        await cache.close()
    }

    @Test func readerOfAnEvictedEntryStillReadsItWhole() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let (origin, keys) = Self.origin(count: 5, size: 100_000)
        let cache = try SegmentCache(
            configuration: directory.configuration(maxBytes: 250_000).withChunkSize(4_096), source: origin)
        _ = try await cache.fetch(keys[0]).body.collect()
        #expect(try await eventually { cache.statistics.publishedFills == 1 })

        let held = try await cache.fetch(keys[0])
        #expect(held.disposition == .hit)
        var iterator = held.body.makeAsyncIterator()
        var bytes = try await iterator.next() ?? []
        for key in keys[1...] { _ = try await cache.fetch(key).body.collect() }
        #expect(try await eventually { cache.statistics.publishedFills == 5 })
        #expect(cache.cachedEntry(for: keys[0]) == nil)

        while let chunk = try await iterator.next() { bytes += chunk }
        #expect(bytes == origin.body(of: keys[0].url))
        await cache.close()
    }

    @Test func leastRecentlyUsedEntryGoesFirstAcrossARestart() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let (origin, keys) = Self.origin(count: 4, size: 100_000)
        let clock = ManualClock()
        let configuration = directory.configuration(maxBytes: 350_000)
        let cache = try SegmentCache(configuration: configuration, source: origin, clock: clock)
        for (index, key) in keys[0..<3].enumerated() {
            _ = try await cache.fetch(key).body.collect()
            // Published, and so used, before the clock moves on (a publication after it once made 2 the oldest).
            #expect(try await eventually { cache.statistics.publishedFills == index + 1 })
            clock.advance(by: 1)
        }
        _ = try #require(cache.cachedEntry(for: keys[0]))  // 0 is now the most recently used; 1 the least
        clock.advance(by: 1)
        await cache.close()

        let reopened = try SegmentCache(configuration: configuration, source: origin, clock: clock)
        #expect(reopened.statistics.entries == 3)
        _ = try await reopened.fetch(keys[3]).body.collect()
        #expect(try await eventually { reopened.statistics.publishedFills == 1 })
        #expect(reopened.cachedEntry(for: keys[1]) == nil)
        #expect(reopened.cachedEntry(for: keys[0]) != nil)
        #expect(reopened.cachedEntry(for: keys[2]) != nil)
        await reopened.close()
    }

    /// An object larger than the whole cache, its length announced or not (then found out as it outgrows the cache):
    /// passed through, never published, its body buffered in its unlinked temporary file as for an answer not
    /// stored, not in memory (all of it would be held for as long as its slowest reader takes), and shared by a
    /// request that joins while it arrives.
    @Test(arguments: [true, false])
    func objectLargerThanTheCacheIsPassedThroughItsFile(lengthAnnounced: Bool) async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let (origin, keys) = Self.origin(count: 1, size: 300_000)
        let key = keys[0]
        let chunkGate = Gate()
        origin.setBehaviour(
            FakeOrigin.Behaviour(
                chunkSize: 16_384, announcedLength: lengthAnnounced ? nil : .some(nil), chunkGate: chunkGate),
            for: key.url)
        let files = FaultyFileOperations()
        let cache = try SegmentCache(
            configuration: directory.configuration(maxBytes: 200_000), source: origin, clock: SystemCacheClock(),
            operations: files)
        let first = try await cache.fetch(key)
        // Announced too large, it is not stored from the start; of unknown length, it is until it outgrows the cache.
        #expect(first.isStored == !lengthAnnounced)
        chunkGate.open(4)
        let joiner = try await cache.fetch(key)
        chunkGate.openForever()
        let expected = origin.body(of: key.url)
        #expect(try await first.body.collect() == expected)
        #expect(try await joiner.body.collect() == expected)
        #expect(origin.fetchCount(for: key) == 1, "the joiner fetched it again")
        #expect(try await eventually { cache.statistics.passThroughFills == 1 })
        #expect(files.bytesWritten >= expected.count, "\(files.bytesWritten) bytes written: the rest went to memory")
        #expect(directory.entryFiles.isEmpty)
        #expect(directory.temporaryFiles.isEmpty)
        await cache.close()
    }
}

extension SegmentCache.Configuration {
    func withChunkSize(_ size: Int) -> Self {
        var copy = self
        copy.readChunkSize = size
        return copy
    }
}
