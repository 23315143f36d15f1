import ByteRanges
import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import HLSPlaylist
import Logging
import OriginCache
import OriginClient
import SegmentCache
import Testing

/// The fill policy (``CachedOrigin`` over its origin object source) against a real origin on loopback: what is
/// stored, for how long, and what is refused, as `serve` and `prefetch --cache-dir` both fill.
@Suite("Cached origin", .sharedMachine)
struct CachedOriginTests {
    /// A cached origin over `origin`'s host, in a directory of its own, with the fill rules of `configure`; closed
    /// after `body`.
    private func withCachedOrigin(
        _ origin: StreamOrigin, _ configure: (inout OriginCacheConfiguration) -> Void = { _ in },
        _ body: (CachedOrigin) async throws -> Void
    ) async throws {
        var configuration = OriginCacheConfiguration()
        configuration.cacheDirectory = ServerProcess.temporaryDirectory()
        configuration.addressPolicy = AddressPolicy(allowedHosts: ["127.0.0.1"])
        configure(&configuration)
        let cached = try CachedOrigin(configuration: configuration, logger: Logger(label: "test"))
        do {
            try await body(cached)
        } catch {
            await cached.close()
            throw error
        }
        await cached.close()
    }

    private func fetch(_ cached: CachedOrigin, _ url: String) async throws -> (CacheResponse, [UInt8]) {
        let response = try await cached.cache.fetch(cached.keys.key(for: url))
        return (response, try await Self.bytes(of: response))
    }

    private static func bytes(of response: CacheResponse) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in response.body { bytes += chunk }
        return bytes
    }

    private static let media = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nseg0.ts\n#EXT-X-ENDLIST\n"
    private static let multivariant = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\nhi/index.m3u8\n"

    @Test("playlists the origin gives no freshness are stored for the VOD and multivariant expiries")
    func playlistsGetTheConfiguredExpiries() async throws {
        try await StreamOrigin.withRunning { origin in
            origin.set("/vod/index.m3u8", .body(Self.media, contentType: "application/vnd.apple.mpegurl"))
            origin.set("/vod/master.m3u8", .body(Self.multivariant, contentType: "application/vnd.apple.mpegurl"))
            try await withCachedOrigin(
                origin,
                {
                    $0.vodPlaylistTTL = .seconds(1000)
                    $0.multivariantPlaylistTTL = .seconds(30)
                }
            ) { cached in
                let (media, _) = try await fetch(cached, origin.url("/vod/index.m3u8"))
                let mediaExpiry = try #require(media.metadata.expiry).timeIntervalSinceNow
                #expect(media.isStored && (990...1000).contains(mediaExpiry), "\(mediaExpiry)")
                let (master, _) = try await fetch(cached, origin.url("/vod/master.m3u8"))
                let masterExpiry = try #require(master.metadata.expiry).timeIntervalSinceNow
                #expect(master.isStored && (20...30).contains(masterExpiry), "\(masterExpiry)")
            }
        }
    }

    @Test("a segment's 404 is remembered for the negative expiry; a playlist's is not stored")
    func notFoundIsRememberedForObjectsOnly() async throws {
        try await StreamOrigin.withRunning { origin in
            origin.set("/gone/seg9.ts", .status(404))
            origin.set("/gone/index.m3u8", .status(404))
            try await withCachedOrigin(origin, { $0.negativeTTL = .seconds(7) }) { cached in
                let (segment, _) = try await fetch(cached, origin.url("/gone/seg9.ts"))
                #expect(segment.metadata.status == 404 && segment.isStored)
                let expiry = try #require(segment.metadata.expiry).timeIntervalSinceNow
                #expect((5...7).contains(expiry), "\(expiry)")
                // Published a moment after its (empty) body's end.
                #expect(try await eventually { cached.cache.statistics.publishedFills == 1 })
                let (again, _) = try await fetch(cached, origin.url("/gone/seg9.ts"))
                #expect(again.disposition == .hit && origin.count("/gone/seg9.ts") == 1)
                let (playlist, _) = try await fetch(cached, origin.url("/gone/index.m3u8"))
                #expect(playlist.metadata.status == 404 && !playlist.isStored)
            }
        }
    }

    @Test("an object past the size limit fails as too large and is not stored; the next request asks again")
    func objectsPastTheLimitFail() async throws {
        try await StreamOrigin.withRunning { origin in
            try await withCachedOrigin(origin, { $0.maxObjectBytes = 10_000 }) { cached in
                let url = origin.url("/large/100000.ts")
                await #expect(throws: (any Error).self) { _ = try await fetch(cached, url) }
                #expect(cached.cache.statistics.entries == 0)
                let (small, body) = try await fetch(cached, origin.url("/large/5000.ts"))
                #expect(small.isStored && body.count == 5000)
                await #expect(throws: (any Error).self) { _ = try await fetch(cached, url) }
                #expect(origin.count("/large/100000.ts") == 2)
            }
        }
    }

    @Test("a playlist that does not parse is refused with its reason and never stored")
    func invalidPlaylistsAreRefused() async throws {
        try await StreamOrigin.withRunning { origin in
            origin.set(
                "/bad/index.m3u8", .body("<html>not a playlist</html>\n", contentType: "application/vnd.apple.mpegurl"))
            try await withCachedOrigin(origin) { cached in
                await #expect(throws: InvalidPlaylistError.self) {
                    _ = try await fetch(cached, origin.url("/bad/index.m3u8"))
                }
                #expect(cached.cache.statistics.entries == 0)
            }
        }
    }

    @Test("a host the address policy does not list is refused before any request")
    func refusedHostsAreNeverAsked() async throws {
        try await StreamOrigin.withRunning { origin in
            try await withCachedOrigin(origin) { cached in
                let url = "http://localhost:\(origin.port)/large/100.ts"
                await #expect {
                    _ = try await fetch(cached, url)
                } throws: { error in
                    (error as? OriginError)?.kind == .refused
                }
                #expect(origin.total == 0)
            }
        }
    }

    @Test("a ranged key is asked for as a Range request and stored as that range")
    func rangesAreFetchedAsRanges() async throws {
        try await StreamOrigin.withRunning { origin in
            try await withCachedOrigin(origin) { cached in
                let url = origin.url("/large/1000.ts")
                let key = cached.keys.key(for: url, range: ByteRange(offset: 100, length: 50))
                let response = try await cached.cache.fetch(key)
                let body = try await Self.bytes(of: response)
                #expect(body == Array(StreamOrigin.pattern(count: 1000)[100..<150]))
                #expect(response.isStored)
            }
        }
    }
}
