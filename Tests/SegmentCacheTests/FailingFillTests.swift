import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import SegmentCache
import Synchronization
import Testing

@Suite("Failing fills", .sharedMachine)
struct FailingFillTests {
    @Test func fillFailingHalfwayFailsEveryJoinerAndPublishesNothing() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(10)
        let size = origin.body(of: key.url).count
        let headGate = Gate()
        let chunkGate = Gate()
        origin.setBehaviour(
            FakeOrigin.Behaviour(chunkSize: 4_096, failAfterBytes: size / 2, headGate: headGate, chunkGate: chunkGate),
            for: key.url
        )
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)

        // Early joiners wait for the head; late ones join with part of the body received. A joiner counted but not
        // yet waiting when the fill fails (a loaded CI run held one that long) gets the fill's error from `fetch`
        // itself: failed either way.
        let early = (0..<10).map { _ in
            Task { () -> Bool in
                do {
                    return await bodyFails(try await cache.fetch(key).body)
                } catch {
                    return error is FakeOriginError
                }
            }
        }
        #expect(try await eventually { cache.statistics.misses + cache.statistics.deduplicatedFills == 10 })
        headGate.openForever()
        chunkGate.open(3)
        let late = try await cache.fetch(key)
        #expect(late.disposition == .joined)
        chunkGate.openForever()

        #expect(await bodyFails(late.body))
        for joiner in early {
            #expect(await joiner.value)
        }
        #expect(try await eventually { cache.statistics.failedFills == 1 })
        #expect(cache.cachedEntry(for: key) == nil)
        #expect(directory.entryFiles.isEmpty)
        #expect(directory.temporaryFiles.isEmpty)

        // The next request fetches again, and this time it works.
        origin.setBehaviour(FakeOrigin.Behaviour(), for: key.url)
        let retry = try await cache.fetch(key)
        #expect(retry.disposition == .miss)
        #expect(try await retry.body.collect() == origin.body(of: key.url))
        #expect(origin.fetchCount(for: key) == 2)
        await cache.close()
    }

    @Test func originErrorBeforeTheHeadReachesEveryRequester() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(11)
        let headGate = Gate()
        origin.setBehaviour(FakeOrigin.Behaviour(headGate: headGate, failBeforeHead: true), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)

        let requests = (0..<5).map { _ in
            Task { () -> FakeOriginError? in
                do {
                    _ = try await cache.fetch(key)
                    return nil
                } catch {
                    return error as? FakeOriginError
                }
            }
        }
        #expect(try await eventually { cache.statistics.misses + cache.statistics.deduplicatedFills == 5 })
        headGate.openForever()
        for request in requests {
            #expect(await request.value == FakeOriginError(url: key.url))
        }
        #expect(origin.fetchCount(for: key) == 1)
        await cache.close()
    }

    /// Shorter, longer, and an announced `Int64.max` (hostile: larger than any cache, so passed through; nothing traps
    /// on it).
    @Test(arguments: [Int64(-100), 100, .max])
    func bodyOfAnotherLengthThanAnnouncedFailsAndIsNotPublished(difference: Int64) async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(12)
        let size = Int64(origin.body(of: key.url).count)
        let announced = difference == .max ? Int64.max : size + difference
        origin.setBehaviour(FakeOrigin.Behaviour(announcedLength: .some(announced)), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)

        // The body fails; or, when the fill got that far before the fetch was given its head, the fetch does.
        await #expect(throws: CacheError.self) { _ = try await cache.fetch(key).body.collect() }
        #expect(try await eventually { cache.statistics.failedFills == 1 })
        #expect(directory.entryFiles.isEmpty)
        #expect(directory.temporaryFiles.isEmpty)
        await cache.close()
    }

    @Test func closingTheCacheMidFillFailsItsReadersAndPublishesNothing() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = PatternOrigin.key(13)
        let chunkGate = Gate()
        // No announced length: only the cache's own check can tell a cancelled stream from a complete one.
        origin.setBehaviour(FakeOrigin.Behaviour(announcedLength: .some(nil), chunkGate: chunkGate), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        let response = try await cache.fetch(key)
        chunkGate.open(2)
        await cache.close()
        chunkGate.openForever()

        #expect(await bodyFails(response.body))
        #expect(cache.statistics.failedFills == 1)
        #expect(directory.entryFiles.isEmpty)
        #expect(directory.temporaryFiles.isEmpty)
        await #expect(throws: CacheError.self) { _ = try await cache.fetch(PatternOrigin.key(14)) }
    }

    @Test func uncacheableAnswerIsPassedThroughAndNotStored() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = CacheKey(url: "https://origin.test/missing.ts")
        origin.setBody(Array("not found".utf8), for: key.url)
        origin.setBehaviour(FakeOrigin.Behaviour(status: 404), for: key.url)
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)

        let response = try await cache.fetch(key)
        #expect(response.metadata.status == 404)
        #expect(!response.isStored)
        #expect(try await response.body.collect() == Array("not found".utf8))
        #expect(try await eventually { cache.statistics.passThroughFills == 1 })
        #expect(directory.entryFiles.isEmpty)

        _ = try await cache.fetch(key).body.collect()
        #expect(origin.fetchCount(for: key) == 2)
        await cache.close()
    }

    /// Once a reader has the end of a body that is not kept, or a failure, the fill is out of the table: the next
    /// viewer's request (another token, the same key when tokens are left out of keys) is a fetch of its own, never a
    /// join of an answer that has ended. The fill's end callback is slowed down: were the end told first, the reader
    /// would see it 50 ms before the fill left the table.
    @Test(arguments: [false, true])
    func aReaderSeesAnUnkeptOrFailedBodyEndOnlyOnceItsFillHasLeftTheTable(failing: Bool) async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let origin = FakeOrigin()
        let key = failing ? PatternOrigin.key(16) : CacheKey(url: "https://origin.test/missing.ts?token=a")
        let headGate = Gate()
        if failing {
            origin.setBehaviour(
                FakeOrigin.Behaviour(chunkSize: 4_096, failAfterBytes: 8_192, headGate: headGate), for: key.url)
        } else {
            origin.setBody(Array("not found".utf8), for: key.url)
            origin.setBehaviour(FakeOrigin.Behaviour(status: 404, headGate: headGate), for: key.url)
        }
        let cache = try SegmentCache(configuration: directory.configuration(), source: origin)
        let fetching = Task { try await cache.fetch(key) }
        #expect(try await eventually { cache.isFilling(key) })
        let order = Mutex<[String]>([])
        #expect(
            cache.whenFillEnds(key) {
                usleep(50_000)
                order.withLock { $0.append("fill ended") }
            })
        headGate.openForever()
        let response = try await fetching.value
        if failing {
            #expect(await bodyFails(response.body))
        } else {
            #expect(try await response.body.collect() == Array("not found".utf8))
        }
        order.withLock { $0.append("reader saw the end") }
        #expect(!cache.isFilling(key))
        #expect(order.withLock { $0 } == ["fill ended", "reader saw the end"])
        #expect(try await cache.fetch(key).disposition == .miss)
        #expect(origin.fetchCount(for: key) == 2)
        await cache.close()
    }
}
