import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// Manifest views served: `hlscache.*` parameters on manifest URLs, and `--manifest-filter`, through a real server,
/// to real players, with the origin watching what it is asked for.
@Suite("Manifest views served", .serialized, .sharedMachine)
struct ManifestViewServeTests {
    /// Whether the origin ever saw one of our parameters.
    static func originSawViews(_ origin: StreamOrigin) -> Bool { origin.targets.contains { $0.contains("hlscache") } }

    @Test("ffmpeg plays a filtered multivariant playlist: only the kept variant is played, the other never fetched")
    func ffmpegPlaysOnlyTheKeptVariant() async throws {
        try await withServer { server, origin in
            let direct = try await FFmpeg.framemd5(origin.url("/ts-multivariant/lo/index.m3u8"))
            #expect(direct.status == 0, "\(direct.errors)")
            let viewed = try await FFmpeg.framemd5(
                server.proxied(origin.url("/ts-multivariant/master.m3u8")) + "?hlscache.bandwidth=-100k")
            #expect(viewed.status == 0, "\(viewed.errors)")
            #expect(viewed.output == direct.output && viewed.output.split(separator: "\n").count > 20)
            #expect(origin.count("/ts-multivariant/hi/index.m3u8") == 0)
            #expect(!origin.counts.keys.contains { $0.hasPrefix("/ts-multivariant/hi/") })
            #expect(!Self.originSawViews(origin))
        }
    }

    @Test("ffmpeg plays alternate audio filtered by language; a language the stream lacks leaves nothing (422)")
    func audioLanguages() async throws {
        try await withServer { server, origin in
            let master = server.proxied(origin.url("/alt-audio/master.m3u8"))
            let direct = try await FFmpeg.framemd5(origin.url("/alt-audio/master.m3u8"))
            let english = try await FFmpeg.framemd5(master + "?hlscache.audio=en&hlscache.codecs=avc1,mp4a")
            #expect(english.status == 0 && english.output == direct.output, "\(english.errors)")
            let french = try await TestHTTP.get(master + "?hlscache.audio=fr")
            #expect(french.status == 422 && french.text.contains("leaves nothing"), "\(french.text)")
            #expect(!Self.originSawViews(origin))
        }
    }

    @Test("ffmpeg plays a live stream through a window, which lists three target durations at least")
    func ffmpegPlaysALiveWindow() async throws {
        try await withServer { server, origin in
            let url = server.proxied(origin.url("/live/index.m3u8")) + "?hlscache.window=1"
            let listed = try await TestHTTP.get(url)
            #expect(listed.text.components(separatedBy: "#EXTINF").count - 1 == 3, "\(listed.text)")
            let played = try await FFmpeg.run([
                "-nostdin", "-v", "error", "-i", url, "-t", "4", "-map", "0", "-c", "copy", "-f", "framemd5", "-",
            ])
            #expect(played.status == 0 && played.output.split(separator: "\n").count > 20, "\(played.errors)")
            #expect(!Self.originSawViews(origin))
        }
    }

    /// The test stream's MPD with a second video Representation at 5 Mbit/s whose segments the origin does not have:
    /// played whole, it fails.
    static func dashWithMissingRepresentation(_ origin: StreamOrigin) throws -> String {
        let original = String(decoding: try #require(origin.file(for: "/dash-timeline/manifest.mpd")), as: UTF8.self)
        let extra = """
            <Representation id="9" mimeType="video/mp4" codecs="avc1.640028" bandwidth="5000000" width="1920" height="1080">
            <SegmentTemplate timescale="10240" initialization="init-$RepresentationID$.m4s" media="chunk-$RepresentationID$-$Number%05d$.m4s" startNumber="1">
            <SegmentTimeline><S t="0" d="20480" r="2" /></SegmentTimeline></SegmentTemplate></Representation>
            </AdaptationSet>
            """
        let range = try #require(original.range(of: "</AdaptationSet>"))
        return original.replacingCharacters(in: range, with: extra)
    }

    @Test("ffmpeg plays a filtered MPD: the Representation filtered out is never fetched")
    func ffmpegPlaysAFilteredMPD() async throws {
        try await withServer { server, origin in
            origin.set(
                "/dash-timeline/two.mpd",
                .body(try Self.dashWithMissingRepresentation(origin), contentType: "application/dash+xml"))
            let direct = try await FFmpeg.framemd5(origin.url("/dash-timeline/manifest.mpd"))
            #expect(direct.status == 0, "\(direct.errors)")
            let whole = try await TestHTTP.get(server.proxied(origin.url("/dash-timeline/two.mpd")))
            #expect(whole.text.contains("bandwidth=\"5000000\""))
            let viewed = try await FFmpeg.framemd5(
                server.proxied(origin.url("/dash-timeline/two.mpd")) + "?hlscache.bandwidth=-1M")
            #expect(viewed.status == 0, "\(viewed.errors)")
            #expect(viewed.output == direct.output && viewed.output.split(separator: "\n").count > 20)
            #expect(!origin.counts.keys.contains { $0.contains("-9") })
            #expect(!Self.originSawViews(origin))
            let nothing = try await TestHTTP.get(
                server.proxied(origin.url("/dash-timeline/two.mpd")) + "?hlscache.height=2000-")
            #expect(nothing.status == 422, "\(nothing.text)")
        }
    }

    @Test("a malformed, repeated or unknown parameter is a 400 naming it, before the origin is asked")
    func malformedViewsAreRefused() async throws {
        try await withServer { server, origin in
            let master = server.proxied(origin.url("/ts-multivariant/master.m3u8"))
            for (query, named) in [
                ("hlscache.bandwith=1M", "hlscache.bandwith"), ("hlscache.window=abc", "hlscache.window"),
                ("hlscache.height=1-2&hlscache.height=3-4", "hlscache.height"),
                ("hlscache.bandwidth=99999999999999999999999-", "hlscache.bandwidth"),
            ] {
                let answer = try await TestHTTP.get(master + "?" + query)
                #expect(answer.status == 400 && answer.text.contains(named), "\(query): \(answer.text)")
            }
            #expect(origin.total == 0)
        }
    }

    @Test("views are never part of a segment's key nor sent to the origin; a view's rendering is kept apart")
    func viewsStayOutOfKeys() async throws {
        try await withServer { server, origin in
            let segment = server.proxied(origin.url("/ts-multivariant/hi/seg0.ts"))
            #expect(try await TestHTTP.get(segment + "?hlscache.window=10").status == 200)
            // The entry is published just after its body went out.
            var again = try await TestHTTP.get(segment + "?hlscache.bandwidth=-1M")
            for _ in 0..<50 where again.header("x-cache") != "HIT" {
                try await Task.sleep(for: .milliseconds(100))
                again = try await TestHTTP.get(segment + "?hlscache.bandwidth=-1M")
            }
            #expect(again.status == 200 && again.header("x-cache") == "HIT", "\(again.headers)")
            #expect(origin.count("/ts-multivariant/hi/seg0.ts") == 1)
            let master = server.proxied(origin.url("/ts-multivariant/master.m3u8"))
            let filtered = try await TestHTTP.get(master + "?hlscache.height=-60")
            let plain = try await TestHTTP.get(master)
            #expect(filtered.text.contains("lo/index.m3u8?hlscache.height=-60") && !filtered.text.contains("hi/"))
            #expect(plain.text.contains("hi/index.m3u8") && plain.text.contains("lo/index.m3u8"))
            #expect(!plain.text.contains("hlscache."))
            // The two spellings of one view share its rendering; the origin's playlist is fetched once for all.
            let respelled = try await TestHTTP.get(master + "?hlscache.height=0-60")
            #expect(respelled.status == 200 && !respelled.text.contains("hi/"))
            #expect(origin.count("/ts-multivariant/master.m3u8") == 1)
            #expect(!Self.originSawViews(origin))
        }
    }

    /// Found by an attack: a player's `Range` on a manifest fetched a part of it, rendered and kept as the whole.
    @Test("a Range on a manifest is ignored: the whole playlist, rendered, never a part of it")
    func rangeOnAManifest() async throws {
        try await withServer { server, origin in
            let master = server.proxied(origin.url("/alt-audio/master.m3u8"))
            for url in [master, master + "?hlscache.audio=en"] {
                let answer = try await TestHTTP.get(url, headers: [(name: "Range", value: "bytes=0-40")])
                #expect(answer.status == 200 && answer.text.contains("video/index.m3u8"), "\(answer.text)")
            }
            let whole = try await TestHTTP.get(master)
            #expect(whole.text.contains("audio/index.m3u8") && whole.text.contains("video/index.m3u8"))
        }
    }

    @Test("--manifest-filter applies to every manifest; a request's view narrows it, never widens it")
    func serverWideFilter() async throws {
        try await withServer(arguments: ["--manifest-filter", "hlscache.bandwidth=-100k"]) { server, origin in
            let master = server.proxied(origin.url("/ts-multivariant/master.m3u8"))
            let plain = try await TestHTTP.get(master)
            #expect(plain.status == 200 && plain.text.contains("lo/index.m3u8") && !plain.text.contains("hi/"))
            let widened = try await TestHTTP.get(master + "?hlscache.bandwidth=150k-")
            #expect(widened.status == 422, "\(widened.text)")
            let played = try await FFmpeg.framemd5(master)
            #expect(played.status == 0 && origin.count("/ts-multivariant/hi/index.m3u8") == 0, "\(played.errors)")
        }
    }

    @Test("--manifest-filter that does not read, or names a viewer's delay, stops the start with the reason")
    func badServerFilterStopsTheStart() async throws {
        for (filter, reason) in [
            ("hlscache.bandwidth=fast", "hlscache.bandwidth"), ("hlscache.delay=30", "a delay"),
        ] {
            let run = try await ChildProcess.run(
                ServerProcess.binary.path, ["serve", "--port", "0", "--manifest-filter", filter], timeout: 30)
            #expect(run.status != 0 && run.errors.contains(reason), "\(run.errors)")
        }
    }

    /// A live media playlist of `count` segments of 2 s from sequence `first`.
    static func livePlaylist(first: Int, count: Int) -> String {
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        for number in first..<(first + count) { text += "#EXTINF:2.0,\nseg\(number).ts\n" }
        return text
    }

    @Test("a window cuts a live playlist to its newest seconds, and follows the multivariant into its media playlists")
    func liveWindow() async throws {
        try await withServer { server, origin in
            let type = "application/vnd.apple.mpegurl"
            origin.set("/live/index.m3u8", .body(Self.livePlaylist(first: 40, count: 30), contentType: type))
            origin.set(
                "/live/master.m3u8",
                .body(
                    "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000,RESOLUTION=96x54\nindex.m3u8\n", contentType: type))
            let master = try await TestHTTP.get(server.proxied(origin.url("/live/master.m3u8")) + "?hlscache.window=12")
            let child = try #require(master.text.split(separator: "\n").first { $0.contains("index.m3u8") })
            #expect(child.hasSuffix("index.m3u8?hlscache.window=12"), "\(master.text)")
            let windowed = try await TestHTTP.get("http://127.0.0.1:\(server.port)" + child)
            let segments = windowed.text.split(separator: "\n").filter { $0.contains(".ts") }
            #expect(segments.count == 6 && segments.first?.hasSuffix("seg64.ts") == true, "\(windowed.text)")
            #expect(windowed.text.contains("#EXT-X-MEDIA-SEQUENCE:64"))
            let plain = try await TestHTTP.get(server.proxied(origin.url("/live/index.m3u8")))
            #expect(plain.text.split(separator: "\n").filter { $0.contains(".ts") }.count == 30)
            #expect(!Self.originSawViews(origin))
        }
    }
}
