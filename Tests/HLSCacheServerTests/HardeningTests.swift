import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import HTTPTypes
import Testing

/// No single request or origin answer can crash the server or exhaust it: each hostile input gets an answer, and the
/// process is still serving afterwards.
@Suite("Hostile input", .serialized, .sharedMachine)
struct HardeningTests {
    static let loopback = ["--allow-host", "127.0.0.1", "--allow-private-networks"]

    /// A Range header, and the status and body length it must get from a 1,000-byte object.
    struct RangeCase: Sendable, CustomTestStringConvertible {
        var header: String
        var status: Int
        var length: Int
        var testDescription: String { header }
    }

    static let ranges = [
        RangeCase(header: "bytes=0-9223372036854775807", status: 206, length: 1000),
        RangeCase(header: "bytes=9223372036854775807-", status: 416, length: 0),
        RangeCase(header: "bytes=-9223372036854775807", status: 206, length: 1000),
        RangeCase(header: "bytes=0-99999999999999999999999", status: 206, length: 1000),
        RangeCase(header: "bytes=-99999999999999999999", status: 206, length: 1000),
        RangeCase(header: "bytes=990-9223372036854775806", status: 206, length: 10),
        RangeCase(header: "bytes=10-5", status: 200, length: 1000),
        RangeCase(header: "bytes=-0", status: 200, length: 1000),
    ]

    @Test(
        "hostile Range headers are answered before and after the object is cached, on both request paths",
        arguments: [true, false])
    func hostileRangesAreAnswered(eventLoopHits: Bool) async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: Self.loopback)
        // `Proxy-Connection` is the decoder's to read: with it, the responder answers every request.
        let path = eventLoopHits ? [] : [(name: "Proxy-Connection", value: "keep-alive")]
        let url = server.proxied(origin.url("/large/1000.ts"))
        for round in ["miss", "hit"] {
            for range in Self.ranges {
                let answer = try await TestHTTP.get(url, headers: [(name: "Range", value: range.header)] + path)
                #expect(answer.status == range.status, "\(round) \(range.header): \(answer.text)")
                #expect(answer.body.count == range.length, "\(round) \(range.header)")
                #expect(server.isRunning, "\(round) \(range.header) killed the server")
            }
            _ = try await TestHTTP.get(url, headers: path)
            // The hit round asks the cached object: on a loaded machine its file could still be on its way into the
            // cache, and every request of the round would join the fill (a CI run read 0 loop hits).
            if round == "miss" { try await HitPathTests.waitForEntries(1, on: server) }
        }
        #expect(try await TestHTTP.get(server.url("/healthz"), headers: path).status == 200)
        let loopHits =
            try await server.metric(#"hlscache_event_loop_hits_total{body="sendfile"}"#)
            + server.metric(#"hlscache_event_loop_hits_total{body="memory"}"#)
        #expect(loopHits > 0, "the event loop answered \(loopHits) hits")
        let decoded = try await server.metric("hlscache_responder_connections_total")
        #expect(eventLoopHits ? decoded == 0 : decoded > 0, "\(decoded) connections read by the decoder")
        await server.stop()
    }

    /// A playlist an origin may send, and what the server must answer.
    struct PlaylistCase: Sendable {
        var name: String
        var body: String
        var headers: [String: String] = [:]
        /// 502 with this in the reason, or nil for a 200.
        var reason: String?
    }

    static let playlists = [
        PlaylistCase(
            name: "media sequence at Int64.max with two segments",
            body: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:9223372036854775807\n"
                + "#EXTINF:4,\na.ts\n#EXTINF:4,\nb.ts\n",
            reason: "number out of range in EXT-X-MEDIA-SEQUENCE: 9223372036854775807 with 2 segments (line 3)"),
        PlaylistCase(
            name: "byte range ending past Int64.max",
            body: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PLAYLIST-TYPE:VOD\n"
                + "#EXT-X-BYTERANGE:9223372036854775807@9223372036854775807\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n",
            reason: "number out of range in EXT-X-BYTERANGE"),
        PlaylistCase(
            name: "implicit byte-range offsets that add up past Int64.max",
            body: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PLAYLIST-TYPE:VOD\n"
                + "#EXT-X-BYTERANGE:5000000000000000000@0\n#EXTINF:4,\na.ts\n"
                + "#EXT-X-BYTERANGE:5000000000000000000\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n",
            reason: "number out of range in EXT-X-BYTERANGE: 5000000000000000000 after offset"),
        PlaylistCase(
            name: "live target duration at Int64.max",
            body: "#EXTM3U\n#EXT-X-TARGETDURATION:9223372036854775807\n#EXTINF:4,\na.ts\n",
            reason: "number out of range in EXT-X-TARGETDURATION"),
        PlaylistCase(
            name: "target duration 1e308",
            body: "#EXTM3U\n#EXT-X-TARGETDURATION:1e308\n#EXTINF:4,\na.ts\n",
            reason: "number out of range in EXT-X-TARGETDURATION: 1e308 (line 2)"),
        PlaylistCase(
            name: "discontinuity sequence at Int64.max",
            body: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-DISCONTINUITY-SEQUENCE:9223372036854775807\n"
                + "#EXTINF:4,\na.ts\n#EXT-X-DISCONTINUITY\n#EXTINF:4,\nb.ts\n",
            reason: "number out of range in EXT-X-DISCONTINUITY-SEQUENCE"),
        PlaylistCase(
            name: "EXTINF not finite or huge, PART-TARGET 1e308: tags ignored, playlist served",
            body: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PART-INF:PART-TARGET=1e308\n#EXTINF:nan,\na.ts\n"
                + "#EXTINF:1e300,\nb.ts\n#EXTINF:inf,\nc.ts\n"),
        PlaylistCase(
            name: "VOD playlist with max-age past Int64.max, an empty directive and a negative Age",
            body: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n",
            headers: ["Cache-Control": "=, max-age=99999999999999999999999, s-maxage=-1", "Age": "-5"]),
        PlaylistCase(
            name: "no-store VOD playlist with max-age at Int64.max",
            body: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n",
            headers: ["Cache-Control": "no-store, max-age=9223372036854775807"]),
        PlaylistCase(
            name: "multivariant playlist whose Expires is far in the future",
            body: "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=99999999999999999999999\nv.m3u8\n",
            headers: ["Expires": "Fri, 31 Dec 9999 23:59:59 GMT"]),
    ]

    @Test("hostile playlists get 502 with the reason and line, or are served; the server lives")
    func hostilePlaylistsAreAnswered() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        // One server for every case, one after another: each answer must leave it serving the next.
        let server = try await InProcessServer.start(arguments: Self.loopback)
        for (index, playlist) in Self.playlists.enumerated() {
            var headers: HTTPFields = [.contentType: "application/vnd.apple.mpegurl"]
            for (name, value) in playlist.headers { headers[HTTPField.Name(name)!] = value }
            origin.set("/hostile\(index).m3u8", .answer(playlist.body, headers: headers))
            for _ in 0..<2 {
                let answer = try await TestHTTP.get(server.proxied(origin.url("/hostile\(index).m3u8")))
                if let reason = playlist.reason {
                    #expect(answer.status == 502, "\(playlist.name)")
                    #expect(
                        answer.text.hasPrefix("origin returned an invalid playlist: "),
                        "\(playlist.name): \(answer.text)")
                    #expect(answer.text.contains(reason), "\(playlist.name): \(answer.text)")
                } else {
                    #expect(answer.status == 200, "\(playlist.name): \(answer.text)")
                    #expect(answer.text.hasPrefix("#EXTM3U"), "\(playlist.name)")
                }
                #expect(server.isRunning, "\(playlist.name) killed the server")
            }
        }
        #expect(try await TestHTTP.get(server.url("/healthz")).status == 200)
        #expect(try await server.settledLog().contains("invalid playlist"), "no log line names the failures")
        await server.stop()
    }
}
