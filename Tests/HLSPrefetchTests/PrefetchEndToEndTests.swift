import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// `hlscache prefetch` against the test origin: into a cache directory a server then plays from with the origin
/// gone, into a self-contained folder ffmpeg plays offline, interrupted and resumed, and recording a live stream.
@Suite("Prefetch", .sharedMachine)
struct PrefetchTests {
    @Test("a VOD stream prefetched into a cache dir plays through a server on that dir with the origin stopped")
    func cacheDirectoryServesTheStreamWithoutTheOrigin() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        let streams = ["ts-multivariant/master.m3u8", "fmp4/index.m3u8", "aes128/index.m3u8"]
        var direct: [String: String] = [:]
        for stream in streams {
            let played = try await FFmpeg.framemd5(origin.url("/" + stream))
            #expect(played.status == 0, "\(played.errors)")
            direct[stream] = played.output
        }
        let directory = ServerProcess.temporaryDirectory()
        for stream in streams {
            let result = try await PrefetchProcess.run([
                origin.url("/" + stream), "--cache-dir", directory, "--allow-private-networks", "--json",
            ])
            #expect(result.status == 0, "prefetch \(stream): \(result.errors)")
            let summary = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
            #expect(summary?["failed"] as? Int == 0)
            #expect((summary?["fetched"] as? Int ?? 0) >= 3, "\(result.output)")
        }
        origin.stop()

        let server = try await ServerProcess.start(cacheDirectory: directory, arguments: ["--allow-private-networks"])
        for stream in streams {
            let played = try await FFmpeg.framemd5(server.proxied(origin.url("/" + stream)))
            #expect(played.status == 0, "\(stream) through the server, origin stopped: \(played.errors)")
            #expect(played.output == direct[stream], "\(stream): packets differ from the origin's")
        }
        let log = try await server.settledLog()
        #expect(!log.contains("cache=MISS"), "the server missed:\n\(log)")
        await server.stop()
    }

    @Test("--server pulls everything through a running hlscache, which then plays it with the origin stopped")
    func serverDestinationFillsTheServersCache() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        let stream = "alt-audio/master.m3u8"
        let direct = try await FFmpeg.framemd5(origin.url("/" + stream))
        let server = try await ServerProcess.start(arguments: ["--allow-private-networks", "--read-ahead", "0"])
        let result = try await PrefetchProcess.run([
            origin.url("/" + stream), "--server", server.url(""), "--quiet", "--json",
        ])
        #expect(result.status == 0, "\(result.errors)")
        #expect(try await server.settledLog().contains("cache=MISS"), "the prefetch did not go through the server")
        origin.stop()
        let played = try await FFmpeg.framemd5(server.proxied(origin.url("/" + stream)))
        #expect(played.status == 0, "\(played.errors)")
        #expect(played.output == direct.output)
        await server.stop()
    }

    @Test("--view walks the stream through a manifest view: the variant it filters out is never fetched")
    func viewFiltersWhatIsFetched() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let directory = ServerProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await PrefetchProcess.run([
            origin.url("/ts-multivariant/master.m3u8"), "--cache-dir", directory, "--allow-private-networks", "--quiet",
            "--view", "hlscache.height=-60",
        ])
        #expect(result.status == 0, "\(result.errors)")
        #expect(origin.count("/ts-multivariant/lo/seg0.ts") == 1)
        #expect(!origin.counts.keys.contains { $0.hasPrefix("/ts-multivariant/hi/") })
        let nothing = try await PrefetchProcess.run([
            origin.url("/dash-timeline/manifest.mpd"), "--cache-dir", directory, "--allow-private-networks", "--quiet",
            "--view", "hlscache.height=2000-",
        ])
        #expect(nothing.status != 0 && nothing.errors.contains("leaves nothing"), "\(nothing.errors)")
    }

    @Test("exit status: 2 for bad usage and an invalid playlist, 1 with the failures listed when objects fail")
    func exitStatus() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let folder = ServerProcess.temporaryDirectory()
        let usage = try await PrefetchProcess.run([origin.url("/fmp4/index.m3u8"), "--variants", "most"])
        #expect(usage.status == 2, "\(usage.errors)")
        #expect(usage.errors.contains("--variants"))
        let both = try await PrefetchProcess.run([
            origin.url("/fmp4/index.m3u8"), "--output", folder + "/a", "--cache-dir", folder + "/b",
        ])
        #expect(both.status == 2)

        origin.set(
            "/bad/index.m3u8", .body("<html>not a playlist</html>\n", contentType: "application/vnd.apple.mpegurl"))
        let invalid = try await PrefetchProcess.run([
            origin.url("/bad/index.m3u8"), "--output", folder + "/c", "--allow-private-networks", "--quiet",
        ])
        #expect(invalid.status == 2, "\(invalid.errors)")
        #expect(invalid.errors.contains("/bad/index.m3u8"))

        origin.set("/fmp4/seg1.m4s", .status(404))
        let partial = try await PrefetchProcess.run([
            origin.url("/fmp4/index.m3u8"), "--output", folder + "/d", "--allow-private-networks", "--json",
            "--retries", "1",
        ])
        #expect(partial.status == 1, "\(partial.errors)")
        #expect(partial.errors.contains("/fmp4/seg1.m4s") && partial.errors.contains("404"))
        #expect(origin.count("/fmp4/seg1.m4s") == 1, "a 404 is not retried")
        let summary = try JSONSerialization.jsonObject(with: Data(partial.output.utf8)) as? [String: Any]
        #expect(summary?["failed"] as? Int == 1)
        #expect((summary?["failures"] as? [[String: Any]])?.first?["url"] as? String == origin.url("/fmp4/seg1.m4s"))
    }

    @Test("prefetch --cache-dir fills by serve's rules: its fill flags and their variables reach the fill")
    func cacheDirectoryTakesServesFillRules() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        // The fMP4 stream's segments are larger than 1 KB, its playlist and init section are not.
        let bounded = try await PrefetchProcess.run([
            origin.url("/fmp4/index.m3u8"), "--cache-dir", ServerProcess.temporaryDirectory(),
            "--allow-private-networks", "--json", "--retries", "0", "--max-object-size", "1KB",
        ])
        #expect(bounded.status == 1, "\(bounded.errors)")
        #expect(bounded.errors.contains("/fmp4/seg1.m4s"), "\(bounded.errors)")
        let variable = try await ChildProcess.run(
            ServerProcess.binary.path,
            [
                "prefetch", origin.url("/fmp4/index.m3u8"), "--cache-dir", ServerProcess.temporaryDirectory(),
                "--allow-private-networks", "--json", "--retries", "0",
            ],
            environment: ChildProcess.cleanEnvironment.merging(["HLSCACHE_MAX_OBJECT_SIZE": "1KB"]) { $1 })
        #expect(variable.status == 1, "HLSCACHE_MAX_OBJECT_SIZE did not reach the fill: \(variable.errors)")
        let refused = try await PrefetchProcess.run([
            origin.url("/fmp4/index.m3u8"), "--cache-dir", ServerProcess.temporaryDirectory(), "--negative-ttl", "-1",
        ])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("--negative-ttl"), "\(refused.errors)")
        let whole = try await PrefetchProcess.run([
            origin.url("/fmp4/index.m3u8"), "--cache-dir", ServerProcess.temporaryDirectory(),
            "--allow-private-networks", "--json", "--max-object-size", "10MB",
        ])
        #expect(whole.status == 0, "\(whole.errors)")
    }

    @Test("an object the address policy refuses fails at once, without retries, into a cache dir as into a folder")
    func refusalsAreNotRetried() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        // The second segment names the same origin by another name, which --allow-host does not list.
        let playlist = """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXTINF:2,
            /fmp4/seg1.m4s
            #EXTINF:2,
            http://localhost:\(origin.port)/fmp4/seg2.m4s
            #EXT-X-ENDLIST

            """
        origin.set("/refused/index.m3u8", .body(playlist, contentType: "application/vnd.apple.mpegurl"))
        for destination in [
            ["--cache-dir", ServerProcess.temporaryDirectory()],
            ["--output", ServerProcess.temporaryDirectory() + "/out"],
        ] {
            let result = try await PrefetchProcess.run(
                [origin.url("/refused/index.m3u8"), "--allow-host", "127.0.0.1", "--retries", "3"] + destination)
            #expect(result.status == 1, "\(destination[0]): \(result.errors)")
            #expect(result.errors.contains("localhost"), "\(destination[0]): \(result.errors)")
            #expect(!result.errors.contains("retrying"), "\(destination[0]): a refusal was retried: \(result.errors)")
        }
    }

    @Test("--output writes a folder ffmpeg plays with the origin stopped, with only sanitised file names")
    func outputFolderPlaysOffline() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        let streams = [
            "ts-multivariant/master.m3u8", "fmp4/index.m3u8", "byterange/index.m3u8", "aes128/index.m3u8",
            "alt-audio/master.m3u8",
        ]
        var folders: [String: String] = [:]
        var direct: [String: String] = [:]
        for stream in streams {
            let played = try await FFmpeg.framemd5(
                origin.url("/" + stream), extraArguments: ["-allowed_extensions", "ALL"])
            direct[stream] = played.output
            let folder = ServerProcess.temporaryDirectory() + "/copy"
            let result = try await PrefetchProcess.run([
                origin.url("/" + stream), "--output", folder, "--allow-private-networks", "--quiet",
            ])
            #expect(result.status == 0, "prefetch \(stream): \(result.errors)")
            folders[stream] = folder
        }
        origin.stop()
        for stream in streams {
            let folder = try #require(folders[stream])
            let played = try await FFmpeg.framemd5(
                folder + "/index.m3u8",
                extraArguments: ["-allowed_extensions", "ALL", "-protocol_whitelist", "file,crypto"])
            #expect(played.status == 0, "\(stream) from \(folder): \(played.errors)")
            #expect(played.output == direct[stream], "\(stream): packets differ from the origin's")
            for path in try FileManager.default.subpathsOfDirectory(atPath: folder) {
                for component in path.split(separator: "/") {
                    #expect(
                        component.wholeMatch(of: /[A-Za-z0-9_][A-Za-z0-9._-]*/) != nil,
                        "unsanitised name \(path) in \(folder)")
                }
                let text = (try? String(contentsOfFile: folder + "/" + path, encoding: .utf8)) ?? ""
                if path.hasSuffix(".m3u8") {
                    #expect(!text.contains("http://") && !text.contains("127.0.0.1"), "\(path) points at the network")
                }
            }
        }
    }

    @Test("hostile URIs become safe file names inside the folder")
    func hostileURIsStayInsideTheFolder() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let playlist = """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXTINF:2,
            ../ts-multivariant/hi/seg0.ts?name=../../../../etc/passwd
            #EXTINF:2,
            /ts-multivariant/hi/seg1.ts?x=%2F..%2F..%2Fevil&y=.hidden
            #EXTINF:2,
            //127.0.0.1:\(origin.port)/ts-multivariant/hi/seg2.ts#../../x
            #EXT-X-ENDLIST

            """
        origin.set("/evil/index.m3u8", .body(playlist, contentType: "application/vnd.apple.mpegurl"))
        let parent = ServerProcess.temporaryDirectory()
        let folder = parent + "/copy"
        let result = try await PrefetchProcess.run([
            origin.url("/evil/index.m3u8"), "--output", folder, "--allow-private-networks", "--quiet",
        ])
        #expect(result.status == 0, "\(result.errors)")
        let inParent = try FileManager.default.contentsOfDirectory(atPath: parent)
        #expect(inParent == ["copy"], "files escaped the output folder: \(inParent)")
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder).sorted()
        #expect(files.filter { $0.hasPrefix("media/") }.count == 3, "\(files)")
        for path in files {
            #expect(!path.contains(".."), "\(path)")
            for component in path.split(separator: "/") {
                #expect(component.wholeMatch(of: /[A-Za-z0-9_][A-Za-z0-9._-]*/) != nil, "unsanitised name \(path)")
            }
        }
        let played = try await FFmpeg.framemd5(folder + "/index.m3u8")
        #expect(played.status == 0, "\(played.errors)")
    }

    @Test("a prefetch killed halfway and rerun fetches only what is missing")
    func interruptedPrefetchResumes() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let segments = (0..<20).map { "/live-source/seg\($0).ts" }
        for path in segments { origin.set(path, .delay(.milliseconds(150))) }
        for destination in ["--output", "--cache-dir"] {
            let folder = ServerProcess.temporaryDirectory() + "/dest"
            let before = segments.map { origin.count($0) }
            let fetchedSoFar: @Sendable () -> Int = {
                zip(segments, before).reduce(0) { $0 + (origin.count($1.0) - $1.1) }
            }
            let arguments = [
                origin.url("/live-source/vod.m3u8"), destination, folder, "--allow-private-networks", "--quiet",
                "--concurrency", "1",
            ]
            let killed = try await PrefetchProcess.run(arguments, killWhen: { fetchedSoFar() >= 10 })
            #expect(killed.status != 0, "the first run was not interrupted")
            let interruptedAt = fetchedSoFar()
            #expect(interruptedAt >= 10 && interruptedAt < 20)

            let rerun = try await PrefetchProcess.run(arguments + ["--json"])
            #expect(rerun.status == 0, "\(rerun.errors)")
            let perSegment = zip(segments, before).map { origin.count($0.0) - $0.1 }
            // Every segment fetched; only the one in flight at the kill (if any) fetched twice.
            #expect(perSegment.allSatisfy { $0 >= 1 }, "\(destination): \(perSegment)")
            #expect(
                perSegment.reduce(0, +) <= 21, "\(destination): refetched more than the one in flight: \(perSegment)")
            let summary = try JSONSerialization.jsonObject(with: Data(rerun.output.utf8)) as? [String: Any]
            #expect((summary?["alreadyPresent"] as? Int ?? 0) >= interruptedAt - 1, "\(rerun.output)")
        }
    }

    @Test("a 10 s live recording has every segment of the window once, in order, and plays")
    func liveRecording() async throws {
        // A window of 8 segments (16 s), as CDNs keep: under the whole suite's load, this test process's origin once
        // answered the recorder's playlist requests 10 s apart, and a window of 4 had moved past a segment by then.
        let window = 8
        let origin = StreamOrigin(liveWindow: window)
        try await origin.start()
        defer { origin.stop() }
        let folder = ServerProcess.temporaryDirectory() + "/live"
        let firstEdge = origin.liveEdge
        let result = try await PrefetchProcess.run([
            origin.url("/live/index.m3u8"), "--output", folder, "--duration", "10s", "--allow-private-networks",
            "--quiet",
        ])
        let lastEdge = origin.liveEdge
        #expect(result.status == 0, "\(result.errors)")
        let text = try String(contentsOfFile: folder + "/index.m3u8", encoding: .utf8)
        #expect(text.contains("#EXT-X-PLAYLIST-TYPE:EVENT"))
        #expect(text.hasSuffix("#EXT-X-ENDLIST\n"))
        let numbers = text.split(separator: "\n").filter { $0.hasPrefix("media/") }.compactMap { line in
            Int(line.dropFirst("media/seg".count).prefix { $0.isNumber })
        }
        // It starts with the whole first window, whenever the loaded machine got it started.
        #expect(
            numbers.first.map { $0 >= firstEdge - (window - 1) } == true,
            "recording starts at \(numbers) vs edge \(firstEdge)")
        #expect(
            numbers.first.map { origin.count("/live/seg\($0 - 1).ts") == 0 && $0 + window - 1 <= numbers.last! }
                == true,
            "the first window was not recorded whole: \(numbers)")
        #expect(numbers == Array(numbers.first!...numbers.last!), "not every segment once, in order: \(numbers)")
        // The first window plus segments that appeared while following (a loaded machine may delay refreshes).
        #expect(numbers.count >= window + 2, "10 s of 2 s segments plus the first window: \(numbers)")
        #expect(
            numbers.last.map { $0 >= firstEdge + 2 } == true, "recording ends at \(numbers.last!), edge \(lastEdge)")
        for number in numbers {
            #expect(
                origin.count("/live/seg\(number).ts") == 1,
                "segment \(number) fetched \(origin.count("/live/seg\(number).ts")) times")
        }
        let played = try await FFmpeg.framemd5(folder + "/index.m3u8")
        #expect(played.status == 0, "\(played.errors)")
        #expect(played.output.split(separator: "\n").count > 50)
    }
}
