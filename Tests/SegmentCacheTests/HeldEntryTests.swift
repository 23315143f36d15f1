import Foundation
import Glibc
import HLSCacheTestTraits
import HLSCacheTesting
import SegmentCache
import Testing

/// Hits keep an entry's file open for the next hit; what another instance on the same directory does to the entry
/// (replace it, remove it, rewrite its expiry) must show all the same, and a removed entry's file must be let go.
@Suite("Entries kept open for hits", .sharedMachine)
struct HeldEntryTests {
    static let key = CacheKey(url: "https://origin.test/live/index.m3u8")

    /// A cache over `directory` whose origin answers `body` for ``key``, fresh for `seconds` by `clock`; it checks
    /// the entries it holds open on every hit unless given a `recheck` window.
    static func cache(
        _ directory: CacheDirectory, body: [UInt8], fresh seconds: TimeInterval, clock: ManualClock,
        recheck: Duration = .zero
    ) throws -> SegmentCache {
        let origin = FakeOrigin()
        origin.setBody(body, for: key.url)
        origin.setBehaviour(FakeOrigin.Behaviour(expiry: clock.now().addingTimeInterval(seconds)), for: key.url)
        var configuration = directory.configuration()
        configuration.heldEntryRecheck = recheck
        return try SegmentCache(configuration: configuration, source: origin, clock: clock)
    }

    /// Fills `key` through `cache` and waits until it is published.
    static func fill(_ cache: SegmentCache) async throws {
        _ = try await cache.fetch(key, freshness: .fresh).body.collect()
        #expect(
            try await eventually { cache.cachedEntry(for: key)?.metadata.expiry != nil },
            "not published: \(cache.statistics)")
    }

    @Test("an entry replaced by another instance is read anew, not from the file a hit kept open")
    func replacementElsewhereIsSeen() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let cache = try Self.cache(directory, body: Array("v1".utf8), fresh: 10, clock: clock)
        try await Self.fill(cache)
        #expect(try await cache.publishedResponse(for: Self.key)?.body.collect() == Array("v1".utf8))
        clock.advance(by: 20)
        #expect(cache.publishedResponse(for: Self.key) == nil)
        let other = try Self.cache(directory, body: Array("v2, longer".utf8), fresh: 100, clock: clock)
        try await Self.fill(other)
        let hit = try #require(cache.publishedResponse(for: Self.key))
        #expect(try await hit.body.collect() == Array("v2, longer".utf8))
        await other.close()
        await cache.close()
    }

    @Test("an entry removed by another instance is a miss; an expiry rewritten in place is the one that counts")
    func removalAndExpiryElsewhereAreSeen() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let cache = try Self.cache(directory, body: Array("v1".utf8), fresh: 10, clock: clock)
        try await Self.fill(cache)
        #expect(cache.publishedResponse(for: Self.key) != nil)
        clock.advance(by: 20)
        #expect(cache.publishedResponse(for: Self.key) == nil)
        let other = try SegmentCache(configuration: directory.configuration(), source: DeadOrigin(), clock: clock)
        #expect(other.updateExpiry(clock.now().addingTimeInterval(60), for: Self.key))
        #expect(cache.publishedResponse(for: Self.key) != nil, "the expiry rewritten in place was not read")
        other.invalidate(Self.key)
        #expect(cache.publishedResponse(for: Self.key) == nil, "a removed entry was served from its open file")
        await other.close()
        await cache.close()
    }

    @Test(
        "within the recheck window a held entry is served without a check; after it, another instance's removal is seen"
    )
    func recheckWindowBoundsWhatIsMissed() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let cache = try Self.cache(
            directory, body: Array("v1".utf8), fresh: 100, clock: clock, recheck: .milliseconds(200))
        try await Self.fill(cache)
        #expect(cache.publishedResponse(for: Self.key) != nil)  // checked now: the window starts
        let other = try SegmentCache(configuration: directory.configuration(), source: DeadOrigin(), clock: clock)
        other.invalidate(Self.key)
        // Inside the window the open file still answers (it is the version that was current when checked) ...
        let start = ContinuousClock.now
        let within = cache.publishedResponse(for: Self.key)
        if ContinuousClock.now - start < .milliseconds(150) {
            #expect(try await within?.body.collect() == Array("v1".utf8))
        }
        // ... and once the window has passed, the removal is seen.
        try await Task.sleep(for: .milliseconds(250))
        #expect(cache.publishedResponse(for: Self.key) == nil, "a removed entry was served after the window")
        await other.close()
        await cache.close()
    }

    /// A cache over `directory` holding ``key`` open after a hit, and the entry's file.
    static func heldEntry(_ directory: CacheDirectory, clock: ManualClock) async throws -> (SegmentCache, String) {
        let cache = try Self.cache(directory, body: Array(repeating: 7, count: 4096), fresh: 100, clock: clock)
        try await Self.fill(cache)
        let file = try #require(directory.entryFiles.first)
        #expect(cache.publishedResponse(for: Self.key) != nil)
        #expect(Self.openDescriptors(of: file) == 1)
        return (cache, file)
    }

    @Test("removing an entry lets go of the file a hit kept open, so its blocks are freed")
    func removalClosesTheHeldFile() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let (cache, file) = try await Self.heldEntry(directory, clock: ManualClock())
        cache.invalidate(Self.key)
        #expect(Self.openDescriptors(of: file) == 0)
        await cache.close()
    }

    @Test("an entry another instance removed is let go by the janitor's next pass, without waiting for a hit")
    func janitorLetsGoOfFilesRemovedElsewhere() async throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        let clock = ManualClock()
        let (cache, file) = try await Self.heldEntry(directory, clock: clock)
        let other = try SegmentCache(configuration: directory.configuration(), source: DeadOrigin(), clock: clock)
        other.invalidate(Self.key)
        #expect(Self.openDescriptors(of: file) == 1)
        cache.performMaintenance()
        #expect(Self.openDescriptors(of: file) == 0)
        await other.close()
        await cache.close()
    }

    /// How many of this process's descriptors name `path` (deleted or not).
    static func openDescriptors(of path: String) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter { descriptor in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor))
            return target?.hasPrefix(path) == true
        }.count
    }
}
