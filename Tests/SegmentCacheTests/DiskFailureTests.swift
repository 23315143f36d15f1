import Foundation
import Glibc
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

@testable import SegmentCache

@Suite("Disk failures", .sharedMachine)
struct DiskFailureTests {
    /// After a disk error the rest of a body goes through memory, for as long as its slowest reader takes: past the
    /// fill's memory bound the fill fails (its readers cut short, never a clean end) instead.
    @Test func bodyHeldInMemoryAfterADiskErrorIsBounded() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let small = PatternOrigin.key(20)
        let large = PatternOrigin.key(21)
        origin.setBody(StreamOrigin.pattern(count: 100_000), for: small.url)
        origin.setBody(StreamOrigin.pattern(count: 400_000), for: large.url)
        let files = FaultyFileOperations()
        var configuration = directory.configuration()
        configuration.maxMemoryPerFill = 200_000
        let cache = try SegmentCache(
            configuration: configuration, source: origin, clock: SystemCacheClock(), operations: files)
        files.set(FaultyFileOperations.Faults(failWritesAfterBytes: 10_000, writeErrno: EIO))
        // Within the bound: served whole from memory.
        #expect(try await cache.fetch(small).body.collect() == origin.body(of: small.url))
        files.set(FaultyFileOperations.Faults(failWritesAfterBytes: 10_000, writeErrno: EIO))
        // The body fails; or, when the fill got that far before the fetch was given its head, the fetch does.
        do {
            let response = try await cache.fetch(large)
            #expect(await bodyFails(response.body, with: .memoryBoundKind))
        } catch let error as CacheError {
            #expect(error.isSameKind(as: .memoryBoundKind), "\(error)")
        }
        #expect(directory.entryFiles.isEmpty)
        await cache.close()
    }

    @Test func fullDiskMidFillServesEveryRequesterAndPublishesNothing() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(30)
        let expected = origin.body(of: key.url)
        let headGate = Gate()
        let chunkGate = Gate()
        origin.setBehaviour(
            FakeOrigin.Behaviour(chunkSize: 8_192, headGate: headGate, chunkGate: chunkGate), for: key.url)
        let files = FaultyFileOperations()
        files.set(FaultyFileOperations.Faults(failWritesAfterBytes: 30_000, writeErrno: ENOSPC))
        let cache = try SegmentCache(
            configuration: directory.configuration(), source: origin, clock: SystemCacheClock(), operations: files)

        let early = (0..<5).map { _ in Task { try await cache.fetch(key).body.collect() } }
        #expect(try await eventually { cache.statistics.misses + cache.statistics.deduplicatedFills == 5 })
        headGate.openForever()
        chunkGate.open(6)  // past the failure: the rest goes through memory
        #expect(try await eventually { cache.statistics.diskErrors == 1 })
        let late = try await cache.fetch(key)  // joins with bytes in the (unlinked) file and in memory
        chunkGate.openForever()

        #expect(try await late.body.collect() == expected)
        for request in early {
            #expect(try await request.value == expected)
        }
        #expect(try await eventually { cache.statistics.passThroughFills == 1 })
        #expect(cache.statistics.diskErrors == 1)
        #expect(cache.statistics.failedFills == 0)
        #expect(directory.entryFiles.isEmpty)
        #expect(directory.temporaryFiles.isEmpty)
        #expect(cache.statistics.entries == 0)

        // Space is back: the next request fetches again and publishes.
        files.set(FaultyFileOperations.Faults())
        #expect(try await cache.fetch(key).body.collect() == expected)
        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        #expect(cache.cachedEntry(for: key) != nil)
        #expect(origin.fetchCount(for: key) == 2)
        await cache.close()
    }

    /// With `.beforePublish` the seal runs on the disk threads and its retry comes after a wait for them.
    @Test(arguments: [SegmentCache.SyncPolicy.never, .beforePublish])
    func fullDiskAtTheHeaderMakesRoomAndPublishes(sync: SegmentCache.SyncPolicy) async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let files = FaultyFileOperations()
        var configuration = directory.configuration()
        configuration.sync = sync
        let cache = try SegmentCache(
            configuration: configuration, source: origin, clock: SystemCacheClock(), operations: files)
        let older = PatternOrigin.key(33)
        _ = try await cache.fetch(older).body.collect()
        #expect(try await eventually { cache.statistics.publishedFills == 1 })

        // The header is written last, into the hole left for it: on a full disk that write is the one that fails.
        files.set(FaultyFileOperations.Faults(fullDiskHeaderWrites: 1))
        let key = PatternOrigin.key(34)
        #expect(try await cache.fetch(key).body.collect() == origin.body(of: key.url))
        #expect(try await eventually { cache.statistics.publishedFills == 2 })
        #expect(cache.cachedEntry(for: key) != nil)
        #expect(cache.cachedEntry(for: older) == nil, "no room was made for the header")
        #expect(cache.statistics.diskErrors == 0)
        #expect(directory.temporaryFiles.isEmpty)
        await cache.close()
    }

    @Test func fillsGoOnWhileEveryEarlierFillIsStuckInFdatasync() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let files = FaultyFileOperations()
        let diskThreads = DiskThreads(count: 4, queueLimit: 64, name: "test-disk")
        defer { diskThreads.stop() }
        let released = Flag()
        let cache = try Self.cacheWithStalledDisk(
            directory, origin: origin, files: files, diskThreads: diskThreads, released: released)
        // More fills than the pool has threads, each stuck sealing its entry once its reader has every byte.
        let stuck = ProcessInfo.processInfo.activeProcessorCount + 2
        for index in 0..<stuck {
            let key = PatternOrigin.key(40 + index)
            #expect(try await cache.fetch(key).body.collect() == origin.body(of: key.url))
        }
        #expect(try await eventually(timeout: .seconds(50)) { files.synchronizeWaiting == min(stuck, 4) })
        let next = PatternOrigin.key(39)
        #expect(try await cache.fetch(next).body.collect() == origin.body(of: next.url))
        #expect(!released.isSet, "a fill waited for the stalled disk's fdatasync")
        #expect(cache.statistics.publishedFills == 0)

        files.holdSynchronize(false)
        #expect(try await eventually(timeout: .seconds(30)) { cache.statistics.publishedFills == stuck + 1 })
        #expect(cache.cachedEntry(for: next) != nil)
        await cache.close()
    }

    @Test("past the disk threads' queue, a fill is served but not kept: one disk error, its temporary file removed")
    func aSealPastTheDiskQueueIsNotKept() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let files = FaultyFileOperations()
        let diskThreads = DiskThreads(count: 1, queueLimit: 1, name: "test-queue")
        defer { diskThreads.stop() }
        let cache = try Self.cacheWithStalledDisk(directory, origin: origin, files: files, diskThreads: diskThreads)
        let keys = (0..<3).map { PatternOrigin.key(50 + $0) }
        // The first seal holds the one thread, the second waits in the queue, the third finds it full.
        for (index, key) in keys.enumerated() {
            #expect(try await cache.fetch(key).body.collect() == origin.body(of: key.url))
            if index == 0 { #expect(try await eventually { files.synchronizeWaiting == 1 }) }
            if index == 1 { #expect(try await eventually { diskThreads.waiting == 1 }) }
        }
        #expect(try await eventually { cache.statistics.diskErrors == 1 })
        files.holdSynchronize(false)
        #expect(try await eventually(timeout: .seconds(30)) { cache.statistics.publishedFills == 2 })
        #expect(cache.cachedEntry(for: keys[0]) != nil && cache.cachedEntry(for: keys[1]) != nil)
        #expect(cache.cachedEntry(for: keys[2]) == nil)
        #expect(try await eventually { directory.temporaryFiles.isEmpty })
        await cache.close()
    }

    /// A cache on `directory` that syncs before publishing, on disk threads of its own (its held seals must not hold
    /// up other tests' caches), over `files`, whose `fdatasync` is held from now on. A block on a dispatch queue
    /// releases it after 60 s (and sets `released`): not a task, since were the concurrency pool's threads all stuck
    /// in `fdatasync`, no task could end the test; and late, since in the whole suite other tests' blocking waits
    /// hold the pool too.
    private static func cacheWithStalledDisk(
        _ directory: CacheDirectory, origin: FakeOrigin, files: FaultyFileOperations, diskThreads: DiskThreads,
        released: Flag = Flag()
    ) throws -> SegmentCache {
        var configuration = directory.configuration()
        configuration.sync = .beforePublish
        let cache = try SegmentCache(
            configuration: configuration, source: origin, clock: SystemCacheClock(), operations: files,
            diskThreads: diskThreads)
        files.holdSynchronize(true)
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) {
            released.set()
            files.holdSynchronize(false)
        }
        return cache
    }

    @Test(arguments: [EROFS, EACCES])
    func unwritableDirectoryPassesFillsThrough(code: CInt) async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(31)
        let files = FaultyFileOperations()
        let cache = try SegmentCache(
            configuration: directory.configuration(), source: origin, clock: SystemCacheClock(), operations: files)
        files.set(FaultyFileOperations.Faults(failCreate: code))

        let response = try await cache.fetch(key)
        #expect(!response.isStored)
        #expect(try await response.body.collect() == origin.body(of: key.url))
        #expect(try await eventually { cache.statistics.passThroughFills == 1 })
        #expect(cache.statistics.diskErrors == 1)
        #expect(directory.entryFiles.isEmpty)
        await cache.close()
    }

    @Test func directoryUnwritableAtOpenStillServesWhatItHas() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let cached = PatternOrigin.key(32)
        let writer = try SegmentCache(configuration: directory.configuration(), source: origin)
        _ = try await writer.fetch(cached).body.collect()
        // Published before the close, which cancels a publication under way (once, on a loaded machine, it was).
        #expect(try await eventually { writer.statistics.publishedFills == 1 })
        await writer.close()

        let files = FaultyFileOperations()
        files.set(FaultyFileOperations.Faults(failCreate: EROFS))
        let cache = try SegmentCache(
            configuration: directory.configuration(), source: origin, clock: SystemCacheClock(), operations: files)
        #expect(cache.statistics.diskErrors == 1)
        #expect(try await cache.fetch(cached).disposition == .hit)
        let other = PatternOrigin.key(33)
        #expect(try await cache.fetch(other).body.collect() == origin.body(of: other.url))
        #expect(try await eventually { cache.statistics.passThroughFills == 1 })
        await cache.close()
    }

    @Test func failedRenameLeavesNoEntryAndNoTemporaryFile() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(34)
        let files = FaultyFileOperations()
        files.set(FaultyFileOperations.Faults(failRename: EIO))
        let cache = try SegmentCache(
            configuration: directory.configuration(), source: origin, clock: SystemCacheClock(), operations: files)

        #expect(try await cache.fetch(key).body.collect() == origin.body(of: key.url))
        #expect(try await eventually { cache.statistics.diskErrors == 1 })
        #expect(try await eventually { directory.temporaryFiles.isEmpty })
        #expect(directory.entryFiles.isEmpty)
        #expect(cache.statistics.entries == 0)
        await cache.close()
    }

    @Test func corruptEntryIsRemovedAndFetchedAgain() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(35)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        _ = try await cache.fetch(key).body.collect()
        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        let file = try #require(directory.entryFiles.first)
        #expect(truncate(file, 1_000) == 0)

        let response = try await cache.fetch(key)
        #expect(response.disposition == .miss)
        #expect(try await response.body.collect() == origin.body(of: key.url))
        #expect(cache.statistics.diskErrors == 1)
        #expect(origin.fetchCount(for: key) == 2)
        await cache.close()
    }
}
