import Foundation
import HLSCacheTestTraits
import HLSPlaylist
import Testing

@testable import OriginCache

/// How long an origin's answer stays fresh, and which content type an object gets: the fill policy's pure rules.
@Suite("Freshness and content-type rules", .sharedMachine)
struct FreshnessRulesTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    static func directives(_ headers: [String: String]) -> CacheDirectives {
        CacheDirectives { headers[$0] }
    }

    static func playlist(_ text: String) throws -> Playlist {
        try Playlist(parsing: Array(text.utf8))
    }

    @Test("max-age less Age, s-maxage over max-age, no-cache now, Expires when there is no max-age")
    func directivesGiveExpiry() {
        #expect(Self.directives(["cache-control": "max-age=60"]).expiry(receivedAt: Self.now) == Self.now + 60)
        #expect(
            Self.directives(["cache-control": "max-age=60", "age": "50"]).expiry(receivedAt: Self.now) == Self.now + 10)
        #expect(
            Self.directives(["cache-control": "max-age=60", "age": "90"]).expiry(receivedAt: Self.now) == Self.now)
        #expect(Self.directives(["cache-control": "max-age=60, s-maxage=5"]).maxAge == 5)
        #expect(Self.directives(["cache-control": "no-cache, max-age=60"]).expiry(receivedAt: Self.now) == Self.now)
        #expect(Self.directives(["cache-control": "private"]).noStore)
        #expect(Self.directives(["cache-control": "No-Store"]).noStore)
        let expires = HTTPDate.format(Self.now + 120)
        #expect(Self.directives(["expires": expires]).expiry(receivedAt: Self.now) == Self.now + 120)
        #expect(Self.directives(["expires": "not a date"]).expiry(receivedAt: Self.now) == .distantPast)
        #expect(Self.directives([:]).expiry(receivedAt: Self.now) == nil)
    }

    @Test("an HTTP date reads back as the moment it was written, to the second")
    func httpDateRoundTrip() {
        let text = HTTPDate.format(Self.now)
        #expect(text == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(HTTPDate.parse(text) == Self.now)
        #expect(HTTPDate.parse("yesterday") == nil)
    }

    @Test("live playlists: half a target duration whatever the headers; VOD and multivariant: headers, else defaults")
    func playlistExpiry() throws {
        let rules = PlaylistFreshness(vodTTL: .seconds(300), multivariantTTL: .seconds(30))
        let live = try Self.playlist("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6,\na.ts\n")
        let vod = try Self.playlist("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6,\na.ts\n#EXT-X-ENDLIST\n")
        let multivariant = try Self.playlist("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n")
        let noHeaders = Self.directives([:])
        let minute = Self.directives(["cache-control": "max-age=60"])
        #expect(rules.expiry(of: live, directives: minute, now: Self.now) == Self.now + 3)
        #expect(rules.expiry(of: vod, directives: minute, now: Self.now) == Self.now + 60)
        #expect(rules.expiry(of: vod, directives: noHeaders, now: Self.now) == Self.now + 300)
        #expect(rules.expiry(of: multivariant, directives: noHeaders, now: Self.now) == Self.now + 30)
    }

    @Test("content types come from the extension of the path, ignoring case, query and fragment")
    func contentTypesByExtension() {
        #expect(MediaTypes.byExtension(of: "https://h/a/seg1.TS?token=x") == "video/mp2t")
        #expect(MediaTypes.byExtension(of: "https://h/a/init.mp4#t=1") == "video/mp4")
        #expect(MediaTypes.byExtension(of: "https://h/a/index.m3u8") == "application/vnd.apple.mpegurl")
        #expect(MediaTypes.byExtension(of: "https://h/a.b/segment") == nil)
        #expect(MediaTypes.byExtension(of: "https://h/a/file.unknown") == nil)
        #expect(MediaTypes.pathExtension(of: "https://h/dir.d/x?y=a.ts") == "")
    }
}
