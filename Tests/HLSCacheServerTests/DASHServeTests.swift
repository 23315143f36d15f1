import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import HTTPTypes
import Testing

/// DASH through `hlscache serve`: the packages ffmpeg makes play with the origin's frames, once from the origin and
/// then from the cache; bad MPDs are refused with a reason; live MPDs are fetched about once per update period.
@Suite("DASH through hlscache", .serialized, .sharedMachine)
struct DASHServeTests {
    /// Packages whose every object is fetched whole (no Range): each must reach the origin exactly once.
    static let wholeObjects = ["dash-timeline", "dash-number", "dash-list"]
    /// Packages played by byte ranges of one file per Representation.
    static let ranged = ["dash-ranges", "dash-ondemand"]

    @Test(
        "plays each package with the origin's frames, fetching each object once, and a second play from the cache",
        arguments: wholeObjects + ranged)
    func playsLikeTheOrigin(package: String) async throws {
        try await withServer(arguments: ["--read-ahead", "0"]) { server, origin in
            let manifest = origin.url("/\(package)/manifest.mpd")
            let direct = try await FFmpeg.framemd5(manifest)
            #expect(direct.output.split(separator: "\n").count > 100, "ffmpeg on the origin: \(direct.errors)")
            let before = origin.counts

            let first = try await FFmpeg.framemd5(server.proxied(manifest))
            #expect(first.output == direct.output, "through hlscache: \(first.errors)")
            if Self.wholeObjects.contains(package) {
                let fetched = origin.counts.filter { $0.value != before[$0.key] }
                for (path, count) in fetched {
                    #expect(count - (before[path] ?? 0) == 1, "\(path) fetched \(count - (before[path] ?? 0)) times")
                }
            }

            try await Task.sleep(for: .milliseconds(300))
            let settled = origin.total
            let second = try await FFmpeg.framemd5(server.proxied(manifest))
            #expect(second.output == direct.output)
            #expect(origin.total == settled, "the second play asked the origin again: \(origin.counts)")
        }
    }

    @Test("the MPD is served rewritten as application/dash+xml, every segment URL through hlscache")
    func rewrittenManifest() async throws {
        try await withServer { server, origin in
            let answer = try await TestHTTP.get(server.proxied(origin.url("/dash-timeline/manifest.mpd")))
            #expect(answer.status == 200)
            #expect(answer.header("content-type") == "application/dash+xml")
            let proxiedBase = "/o/http/127.0.0.1:\(origin.port)/dash-timeline/"
            #expect(answer.text.contains("media=\"\(proxiedBase)chunk-$RepresentationID$-$Number%05d$.m4s\""))
            #expect(answer.text.contains("initialization=\"\(proxiedBase)init-$RepresentationID$.m4s\""))
            // The fill publishes its entry once the body has ended: a request before that joins the fill (MISS).
            var again = try await TestHTTP.get(server.proxied(origin.url("/dash-timeline/manifest.mpd")))
            let deadline = ContinuousClock.now + .seconds(5)
            while again.header("x-cache") != "HIT", ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                again = try await TestHTTP.get(server.proxied(origin.url("/dash-timeline/manifest.mpd")))
            }
            #expect(again.header("x-cache") == "HIT")
            #expect(again.body == answer.body)
            #expect(origin.count("/dash-timeline/manifest.mpd") == 1)
        }
    }

    @Test("an invalid, XXE or billion-laughs MPD answers 502 with its reason, at once, and the server stays up")
    func invalidManifests() async throws {
        try await withServer { server, origin in
            let type: HTTPFields = [.contentType: "application/dash+xml"]
            origin.set(
                "/bad.mpd", .answer("<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\">\n<Period>\n</MPD>", headers: type))
            let hostile = ["hostile-xxe.mpd", "hostile-billion-laughs.mpd"]
            for name in hostile {
                let text = try String(
                    contentsOf: TestPaths.fixtures.appendingPathComponent("mpd/\(name)"), encoding: .utf8)
                origin.set("/\(name)", .answer(text, headers: type))
            }
            let bad = try await TestHTTP.get(server.proxied(origin.url("/bad.mpd")))
            #expect(bad.status == 502)
            #expect(bad.text.hasPrefix("origin returned an invalid MPD: not well-formed XML"))
            #expect(bad.text.contains("(line 3)"))
            for name in hostile {
                let start = ContinuousClock.now
                let answer = try await TestHTTP.get(server.proxied(origin.url("/\(name)")))
                #expect(answer.status == 502)
                #expect(answer.text.contains("document type declaration is not allowed"))
                #expect(ContinuousClock.now - start < .seconds(5))
            }
            #expect(try await server.settledLog().contains("invalid MPD"))
            #expect(try await TestHTTP.get(server.url("/healthz")).status == 200)
        }
    }

    @Test("a segment of a static MPD's Representation reads the next ones of that Representation ahead")
    func readAhead() async throws {
        try await withServer(arguments: ["--read-ahead", "2"]) { server, origin in
            _ = try await TestHTTP.get(server.proxied(origin.url("/dash-timeline/manifest.mpd")))
            let first = try await TestHTTP.get(server.proxied(origin.url("/dash-timeline/chunk-0-00001.m4s")))
            #expect(first.status == 200)
            #expect(
                try await eventually {
                    origin.count("/dash-timeline/chunk-0-00002.m4s") == 1
                        && origin.count("/dash-timeline/chunk-0-00003.m4s") == 1
                })
            #expect(origin.count("/dash-timeline/chunk-1-00001.m4s") == 0, "another Representation's segment")
            // Read ahead, and kept: a hit once its fill is published (until then a request joins the fill).
            var hit = false
            for _ in 0..<100 where !hit {
                let second = try await TestHTTP.get(server.proxied(origin.url("/dash-timeline/chunk-0-00002.m4s")))
                #expect(second.status == 200)
                hit = second.header("x-cache") == "HIT"
                if !hit { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(hit)
            #expect(origin.count("/dash-timeline/chunk-0-00002.m4s") == 1, "fetched again instead of read ahead")
        }
    }

    @Test("an expired MPD is served stale with X-Cache: STALE when the origin fails")
    func staleIfError() async throws {
        try await withServer(arguments: ["--vod-playlist-ttl", "0.3"]) { server, origin in
            let url = server.proxied(origin.url("/dash-list/manifest.mpd"))
            let first = try await TestHTTP.get(url)
            #expect(first.header("x-cache") == "MISS")
            origin.set("/dash-list/manifest.mpd", .status(503))
            try await Task.sleep(for: .milliseconds(600))
            let stale = try await TestHTTP.get(url)
            #expect(stale.status == 200)
            #expect(stale.header("x-cache") == "STALE")
            #expect(stale.header("content-type") == "application/dash+xml")
            #expect(stale.body == first.body)
        }
    }

    @Test("a 50 MB MPD is refused past the manifest size bound, in bounded memory")
    func hugeManifest() async throws {
        let segment = "<SegmentURL media=\"https://cdn.example.com/vod/segment-000000.m4s?token=abcdefabcdef\"/>\n"
        let mpd =
            "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" type=\"static\"><Period><AdaptationSet>"
            + "<Representation id=\"a\" bandwidth=\"1\"><SegmentList duration=\"2\">\n"
            + String(repeating: segment, count: 600_000)
            + "</SegmentList></Representation></AdaptationSet></Period></MPD>\n"
        try await withServerProcess { server, origin in
            origin.set("/huge.mpd", .answer(mpd, headers: [.contentType: "application/dash+xml"]))
            let answer = try await TestHTTP.get(server.proxied(origin.url("/huge.mpd")))
            #expect(answer.status == 502)
            #expect(answer.text.contains("MPD larger than"))
            #expect(server.peakMemory < 200 << 20, "peak \(server.peakMemory >> 20) MB")
            #expect(try await TestHTTP.get(server.url("/healthz")).status == 200)
        }
    }

    @Test("20 players of a dynamic MPD: about one origin fetch per minimumUpdatePeriod")
    func liveManifestRefresh() async throws {
        let mpd = """
            <?xml version="1.0"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" minimumUpdatePeriod="PT2S"
                 availabilityStartTime="2026-01-01T00:00:00Z" minBufferTime="PT2S">
              <Period id="0" start="PT0S"><AdaptationSet mimeType="video/mp4">
                <SegmentTemplate timescale="1" duration="2" media="seg-$Number$.m4s" initialization="init.m4s"/>
                <Representation id="v" bandwidth="100000"/>
              </AdaptationSet></Period>
            </MPD>
            """
        try await withServer { server, origin in
            origin.set("/live/dynamic.mpd", .answer(mpd, headers: [.contentType: "application/dash+xml"]))
            let url = server.proxied(origin.url("/live/dynamic.mpd"))
            let start = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        while ContinuousClock.now - start < .seconds(5) {
                            let answer = try await TestHTTP.get(url)
                            #expect(answer.status == 200)
                            #expect(answer.header("cache-control") == "public, max-age=2")
                            try await Task.sleep(for: .milliseconds(250))
                        }
                    }
                }
                try await group.waitForAll()
            }
            // 5 s at one fetch per 2 s: 3, give or take one at the edges; never one per player.
            let fetches = origin.count("/live/dynamic.mpd")
            #expect((2...5).contains(fetches), "\(fetches) origin fetches of the MPD")
        }
    }

    @Test("a 404 for a segment is remembered for --negative-ttl; a manifest's never is")
    func negativeCaching() async throws {
        try await withServer { server, origin in
            for _ in 0..<3 {
                let answer = try await TestHTTP.get(server.proxied(origin.url("/dash-number/chunk-0-00099.m4s")))
                #expect(answer.status == 404)
                _ = try await TestHTTP.get(server.proxied(origin.url("/dash-number/missing.mpd")))
                // The 404 is published as an entry once its (empty) fill ends.
                try await Task.sleep(for: .milliseconds(300))
            }
            #expect(origin.count("/dash-number/chunk-0-00099.m4s") == 1)
            #expect(origin.count("/dash-number/missing.mpd") == 3)
        }
        try await withServer(arguments: ["--negative-ttl", "0"]) { server, origin in
            for _ in 0..<2 {
                _ = try await TestHTTP.get(server.proxied(origin.url("/dash-number/chunk-0-00099.m4s")))
                // Not remembered, but a request while the first fill is still ending would join it.
                try await Task.sleep(for: .milliseconds(300))
            }
            #expect(origin.count("/dash-number/chunk-0-00099.m4s") == 2)
        }
    }

    @Test("GStreamer's dashdemux plays a package through hlscache, every video frame")
    func gstreamerPlays() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gst-launch-1.0") else {
            Issue.record("gst-launch-1.0 is not installed (gstreamer1.0-tools, -plugins-good, -plugins-bad, -libav)")
            return
        }
        try await withServer { server, origin in
            func frames(_ uri: String) async throws -> Int { try await GStreamer.videoFrames(uri).frames }
            let direct = try await frames(origin.url("/dash-timeline/manifest.mpd"))
            let proxied = try await frames(server.proxied(origin.url("/dash-timeline/manifest.mpd")))
            #expect(direct == 60)
            #expect(proxied == direct)
        }
    }
}
