import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import SegmentCache
import Testing

/// Tests with a second process: the `SegmentCacheWorker` executable.
@Suite("Crashes and two processes", .serialized, .sharedMachine)
struct ProcessTests {
    @Test func processKilledMidFillLeavesOnlyCompleteEntries() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        // More keys than it can fill before the kill: it is always in the middle of eight fills.
        let worker = try WorkerProcess(
            directory: directory.path, first: 0, count: 100_000, concurrency: 8, chunkDelayMicroseconds: 1_000)
        defer { worker.kill() }
        #expect(try await eventually(timeout: .seconds(60)) { worker.completed >= 20 })
        worker.kill()
        let completed = worker.completed
        let started = worker.started
        #expect(worker.problems.isEmpty)
        #expect(!directory.temporaryFiles.isEmpty, "the kill should land in the middle of fills")

        let cache = try SegmentCache(configuration: directory.configuration(), source: DeadOrigin())
        #expect(directory.temporaryFiles.isEmpty)
        var present = 0
        for index in started {
            let key = PatternOrigin.key(index)
            guard let entry = cache.cachedEntry(for: key) else { continue }
            present += 1
            let body = try await entry.body.collect()
            #expect(TestBytes.equal(body, PatternOrigin.body(of: key)), "entry \(index)")
        }
        // A body is read to its end just before it is published, so the last few may be missing.
        #expect(present >= completed - 8)
        #expect(present == directory.entryFiles.count)
        #expect(cache.statistics.entries == present)
        await cache.close()
    }

    @Test func twoProcessesFillingOneDirectoryLeaveNoCorruptEntry() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let worker = try WorkerProcess(
            directory: directory.path, first: 0, count: 200, concurrency: 8, chunkDelayMicroseconds: 200)
        defer { worker.kill() }
        let cache = try SegmentCache(
            configuration: directory.configuration(), source: PatternOrigin(chunkDelayMicroseconds: 200))
        // Overlapping keys, some twice, while the worker fills the same directory.
        let keys = Array(100..<300) + Array(120..<160)
        try await withThrowingTaskGroup(of: Void.self) { group in
            var iterator = keys.shuffled().makeIterator()
            var running = 0
            while true {
                while running < 8, let index = iterator.next() {
                    running += 1
                    group.addTask {
                        let key = PatternOrigin.key(index)
                        let body = try await cache.fetch(key).body.collect()
                        #expect(TestBytes.equal(body, PatternOrigin.body(of: key)), "entry \(index)")
                    }
                }
                guard try await group.next() != nil else { break }
                running -= 1
            }
        }
        #expect(await worker.wait() == 0)
        #expect(worker.problems.isEmpty)

        // This process sees what the other published.
        #expect(try await cache.fetch(PatternOrigin.key(0)).disposition == .hit)
        await cache.close()

        let reopened = try SegmentCache(configuration: directory.configuration(), source: DeadOrigin())
        #expect(reopened.statistics.entries == 300)
        for index in 0..<300 {
            let key = PatternOrigin.key(index)
            let entry = try #require(reopened.cachedEntry(for: key), "entry \(index)")
            let body = try await entry.body.collect()
            #expect(TestBytes.equal(body, PatternOrigin.body(of: key)), "entry \(index)")
        }
        #expect(directory.temporaryFiles.isEmpty)
        await reopened.close()
    }
}
