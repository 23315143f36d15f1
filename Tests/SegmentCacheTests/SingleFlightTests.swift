import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import SegmentCache
import Synchronization
import Testing

@Suite("Single-flight fills", .sharedMachine)
struct SingleFlightTests {
    /// A lookup that found no file while the fill's entry was counted and not yet renamed into place must not then
    /// forget that entry: by the time it says so, the fill may have published it and left (CI saw a published entry
    /// the index no longer held, and a second origin fetch of a key read ahead moments before).
    @Test("a lookup that missed the file just before its fill published it leaves the entry in the index")
    func lookupRacingAPublicationKeepsTheEntry() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(7)
        let files = FaultyFileOperations()
        let cache = try SegmentCache(
            configuration: directory.configuration(), source: origin, clock: SystemCacheClock(), operations: files)
        files.holdRename(true)
        // A test failing on the way must not leave the fill held: the close below would wait for it for ever.
        defer { files.holdRename(false) }
        let body = try await cache.fetch(key).body.collect()
        #expect(body == origin.body(of: key.url))
        // The fill has counted its entry and waits to rename it.
        #expect(try await eventually { files.renameWaiting == 1 && cache.holds(key) })
        // The lookup's open finds nothing; before it says so, the fill renames its file and ends.
        files.onMissingLookup { _ in
            files.onMissingLookup(nil)
            files.holdRename(false)
            let deadline = Date().addingTimeInterval(30)
            while cache.statistics.fillsInFlight > 0, Date() < deadline { usleep(1_000) }
        }
        let looked = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: cache.cachedEntry(for: key) != nil) }.start()
        }
        #expect(!looked, "the lookup ran while the file was not in place")
        let statistics = cache.statistics
        #expect(statistics.publishedFills == 1 && statistics.fillsInFlight == 0, "\(statistics)")
        #expect(statistics.entries == 1, "the index forgot a published entry: \(statistics)")
        #expect(try await cache.fetch(key).body.collect() == body)
        #expect(origin.fetchCount(for: key) == 1)
        await cache.close()
    }

    @Test func hundredRequestsForOneColdKeyShareOneOriginFetch() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(1)
        let headGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: headGate), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)

        try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<100 {
                group.addTask { try await cache.fetch(key).body.collect() }
            }
            // Every request is waiting on the fill before the origin answers.
            let joined = try await eventually {
                let statistics = cache.statistics
                return statistics.misses + statistics.deduplicatedFills == 100
            }
            #expect(joined)
            headGate.openForever()
            let expected = origin.body(of: key.url)
            var bodies = 0
            for try await body in group {
                #expect(body == expected)
                bodies += 1
            }
            #expect(bodies == 100)
        }
        #expect(origin.fetchCount(for: key) == 1)
        let statistics = cache.statistics
        #expect(statistics.originFetches == 1)
        #expect(statistics.misses == 1)
        #expect(statistics.deduplicatedFills == 99)
        await cache.close()
    }

    @Test func joinersArrivingAtEveryPointOfTheFillGetTheWholeBody() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(2)
        let chunkGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(chunkSize: 8_192, chunkGate: chunkGate), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        let expected = origin.body(of: key.url)

        let leader = try await cache.fetch(key)
        #expect(leader.disposition == .miss)
        var iterator = leader.body.makeAsyncIterator()
        var leaderBytes: [UInt8] = []
        var joiners: [Task<[UInt8], any Error>] = []
        var joinerDispositions: [CacheResponse.Disposition] = []
        // One joiner before any byte, then one after each chunk the leader has seen arrive.
        while true {
            let joiner = try await cache.fetch(key)
            joinerDispositions.append(joiner.disposition)
            joiners.append(Task { try await joiner.body.collect() })
            chunkGate.open()
            guard let chunk = try await iterator.next() else { break }
            leaderBytes += chunk
        }
        #expect(leaderBytes == expected)
        #expect(joiners.count == (expected.count + 8_191) / 8_192 + 1)
        for joiner in joiners {
            #expect(try await joiner.value == expected)
        }
        #expect(joinerDispositions.allSatisfy { $0 == .joined || $0 == .hit })
        #expect(joinerDispositions.first == .joined)
        #expect(origin.fetchCount(for: key) == 1)
        await cache.close()
    }

    @Test func fillContinuesWhenItsRequestersGoAway() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(3)
        let chunkGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(chunkGate: chunkGate), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)

        let requester = Task { try await cache.fetch(key).body.collect() }
        #expect(try await eventually { cache.statistics.misses == 1 })
        chunkGate.open()
        requester.cancel()
        await #expect(throws: (any Error).self) { try await requester.value }
        chunkGate.openForever()

        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        let next = try await cache.fetch(key)
        #expect(next.disposition == .hit)
        #expect(try await next.body.collect() == origin.body(of: key.url))
        #expect(origin.fetchCount(for: key) == 1)
        await cache.close()
    }

    @Test func requestAfterPublishIsAHitServedFromTheFile() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(4)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        let first = try await cache.fetch(key)
        #expect(try await first.body.collect() == origin.body(of: key.url))
        #expect(try await eventually { cache.statistics.publishedFills == 1 })

        let hit = try await cache.fetch(key)
        #expect(hit.disposition == .hit)
        #expect(hit.metadata.contentLength == Int64(origin.body(of: key.url).count))
        #expect(hit.metadata.contentType == "video/mp2t")
        let region = hit.withFileRegion { $0 }
        #expect(region != nil)
        #expect(region?.length == hit.metadata.contentLength)
        #expect(try await hit.body.collect() == origin.body(of: key.url))
        #expect(directory.entryFiles.count == 1)
        #expect(cache.statistics.hits == 1)
        await cache.close()
    }

    @Test func aFillStartedAtOnceIsLedByItsLookupAndJoinedByTheNext() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(2)
        let headGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: headGate), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)

        let started = try cache.lookup(
            key, freshness: .fresh, start: .immediate(executorPreference: nil), refreshingStored: false)
        guard case .fill(let fill) = started, fill.leads else {
            Issue.record("the lookup started the fill")
            return
        }
        // The fill's task ran on this thread until it waited for the origin's answer.
        #expect(origin.fetchCount(for: key) == 1, "the origin is asked before the lookup returns")
        #expect(cache.statistics.misses == 1)
        let leader = Task { try await cache.fetch(key, freshness: .fresh, from: started) }
        let follower = Task { try await cache.fetch(key) }
        #expect(try await eventually { cache.statistics.deduplicatedFills == 1 })
        headGate.openForever()
        #expect(try await leader.value.disposition == .miss)
        #expect(try await follower.value.disposition == .joined)
        #expect(try await follower.value.body.collect() == origin.body(of: key.url))
        #expect(try await eventually { cache.statistics.publishedFills == 1 })
        guard case .hit = try cache.lookup(key, start: .immediate(executorPreference: nil), refreshingStored: false)
        else {
            Issue.record("the cache holds an entry of it: a hit, nothing started")
            return
        }
        #expect(origin.fetchCount(for: key) == 1)
        #expect(cache.statistics.misses == 1)
    }
}
