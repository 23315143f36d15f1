import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import SegmentCache
import Synchronization
import Testing

/// Fills are bounded: how many run at once, how long one runs for nobody, and whose failure a joiner takes.
@Suite("Fill bounds", .sharedMachine)
struct FillBoundsTests {
    @Test("item 2: a miss past maxFills is refused at once, and fills again once one ends")
    func missesPastTheFillLimitAreRefused() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let gate = Gate()
        for number in 1...3 {
            origin.setBehaviour(FakeOrigin.Behaviour(headGate: gate), for: PatternOrigin.key(number).url)
        }
        var configuration = directory.configuration()
        configuration.maxFills = 2
        let cache = try SegmentCache(configuration: configuration, source: origin)
        let first = Task { try await cache.fetch(PatternOrigin.key(1)).body.collect() }
        let second = Task { try await cache.fetch(PatternOrigin.key(2)).body.collect() }
        #expect(try await eventually { cache.statistics.fillsInFlight == 2 })
        let refused = await #expect(throws: CacheError.self) { try await cache.fetch(PatternOrigin.key(3)) }
        #expect(refused?.isSameKind(as: .tooManyFillsKind) == true, "\(String(describing: refused))")
        #expect(cache.statistics.fillsRefused == 1)
        #expect(origin.fetchCount(for: PatternOrigin.key(3)) == 0)
        gate.openForever()
        _ = try await (first.value, second.value)
        #expect(try await cache.fetch(PatternOrigin.key(3)).body.collect() == origin.body(of: PatternOrigin.key(3).url))
        await cache.close()
    }

    @Test("item 2: a fill nobody reads or waits for is stopped after abandonAfter and not stored")
    func abandonedFillIsStopped() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(4)
        let chunks = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(chunkSize: 1_000, chunkGate: chunks), for: key.url)
        var configuration = directory.configuration()
        configuration.abandonAfter = .milliseconds(300)
        let cache = try SegmentCache(configuration: configuration, source: origin)
        do {
            // The requester takes the head and goes away.
            chunks.open(1)
            _ = try await cache.fetch(key)
        }
        try await Task.sleep(for: .milliseconds(600))
        chunks.open(1)
        #expect(try await eventually { cache.statistics.abandonedFills == 1 })
        #expect(try await eventually { cache.statistics.fillsInFlight == 0 })
        #expect(cache.statistics.publishedFills == 0)
        await cache.close()
        // Nothing was stored: asked again (with the default patience, so that a loaded machine's pauses between
        // reads do not count), it is fetched again, whole.
        let reopened = try SegmentCache(configuration: directory.configuration(), source: origin)
        chunks.openForever()
        #expect(try await reopened.fetch(key).body.collect() == origin.body(of: key.url))
        #expect(origin.fetchCount(for: key) == 2)
        await reopened.close()
    }

    @Test("item 2: a fill its readers keep reading is never abandoned, however slow")
    func slowReadFillIsKept() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(5)
        let chunks = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(chunkSize: 20_000, chunkGate: chunks), for: key.url)
        var configuration = directory.configuration()
        configuration.abandonAfter = .milliseconds(800)
        let cache = try SegmentCache(configuration: configuration, source: origin)
        let reader = Task { try await cache.fetch(key).body.collect() }
        // Each chunk comes after longer than abandonAfter: the reader waits for it all that time.
        for _ in 0..<2 {
            try await Task.sleep(for: .milliseconds(1_200))
            chunks.open(1)
        }
        chunks.openForever()
        #expect(try await reader.value == origin.body(of: key.url))
        #expect(cache.statistics.abandonedFills == 0)
        await cache.close()
    }

    @Test("item 9: a joiner with its own URL does not take another viewer's 403: it asks with its own")
    func joinersRetryAnotherViewersFailure() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let url = PatternOrigin.key(6).url
        let bad = CacheKey(url: url, fetchURL: url + "?token=bad")
        let good = CacheKey(url: url, fetchURL: url + "?token=good")
        let gate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(status: 403, cacheable: false, headGate: gate), for: bad.fetchURL)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        let leader = Task { try await cache.fetch(bad) }
        #expect(try await eventually { cache.statistics.fillsInFlight == 1 })
        let joiners = (0..<5).map { _ in
            Task { () -> (Int, [UInt8]) in
                let response = try await cache.fetch(good)
                return (response.metadata.status, try await response.body.collect())
            }
        }
        #expect(try await eventually { cache.statistics.deduplicatedFills == 5 })
        gate.openForever()
        #expect(try await leader.value.metadata.status == 403)
        for joiner in joiners {
            let (status, body) = try await joiner.value
            #expect(status == 200)
            #expect(body == origin.body(of: url))
        }
        #expect(cache.statistics.refetchedForOwnURL == 5)
        #expect(origin.fetchCount(for: good) >= 1)
        await cache.close()
    }
}
