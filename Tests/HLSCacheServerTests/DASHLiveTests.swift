import DASHManifest
import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// A live DASH stream, packaged in real time by ffmpeg, watched by 20 players through hlscache.
@Suite("Live DASH through hlscache", .serialized, .sharedMachine)
struct DASHLiveTests {
    /// ffmpeg packaging a live DASH stream into a new folder in real time: 1 s segments, five in the window,
    /// `minimumUpdatePeriod` 2 s, a SegmentTimeline. Returns once the MPD exists.
    static func packager() async throws -> (ChildProcess, URL) {
        let folder = URL(fileURLWithPath: ServerProcess.temporaryDirectory())
        let packager = try ChildProcess(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=10:duration=60",
                "-c:v", "libx264", "-preset", "ultrafast", "-g", "10", "-keyint_min", "10", "-sc_threshold", "0",
                "-f", "dash", "-seg_duration", "1", "-window_size", "5", "-update_period", "2",
                folder.appendingPathComponent("live.mpd").path,
            ])
        #expect(
            try await eventually(timeout: .seconds(20)) {
                FileManager.default.fileExists(atPath: folder.appendingPathComponent("live.mpd").path)
            }, "ffmpeg did not start packaging: \(packager.errors)")
        return (packager, folder)
    }

    @Test("a segment of a dynamic MPD served reads ahead the ones its SegmentTimeline lists after it, and no others")
    func dynamicTimelineReadAhead() async throws {
        let (packager, folder) = try await Self.packager()
        defer { packager.send(SIGKILL) }
        let origin = StreamOrigin(root: folder)
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "2"])
        let manifest = server.proxied(origin.url("/live.mpd"))
        var listed: [String] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while listed.count < 4, ContinuousClock.now < deadline {
            let answer = try await TestHTTP.get(manifest)
            if answer.status == 200, let mpd = try? MPDManifest.parse(answer.body, url: manifest),
                let first = try? mpd.objectsByRepresentation(documentURL: manifest).first
            {
                listed = first.objects.filter { $0.role == .media }.map(\.url)
            }
            if listed.count < 4 { try await Task.sleep(for: .milliseconds(300)) }
        }
        try #require(listed.count >= 4, "the MPD never listed four segments")
        let asked = listed[listed.count - 3]
        _ = try await TestHTTP.get(asked)
        let ahead = listed.suffix(2).map { "/" + $0.split(separator: "/").last! }
        #expect(
            try await eventually(timeout: .seconds(5)) { ahead.allSatisfy { origin.count($0) == 1 } },
            "read ahead: \(origin.counts), wanted \(ahead)")
        let fetched = origin.counts.keys.filter { $0.hasSuffix(".m4s") && !$0.contains("init") }
        let listedPaths = Set(listed.map { "/" + $0.split(separator: "/").last! })
        #expect(Set(fetched).isSubset(of: listedPaths), "fetched \(fetched), listed \(listedPaths)")
        await server.stop()
    }

    @Test("20 players of ffmpeg's live DASH: every segment fetched from the origin once, the MPD once per period")
    func twentyPlayers() async throws {
        let (packager, folder) = try await Self.packager()
        defer { packager.send(SIGKILL) }
        let origin = StreamOrigin(root: folder)
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let manifest = server.proxied(origin.url("/live.mpd"))
        // Players follow the live edge until each has fetched six segments (a loaded machine packages and answers
        // more slowly, so the run is bounded by progress, with a deadline, not by a fixed 10 s).
        let start = ContinuousClock.now
        let deadline = start + .seconds(40)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    var fetched: Set<String> = []
                    while fetched.count < 6 && ContinuousClock.now < deadline {
                        let answer = try await TestHTTP.get(manifest)
                        guard answer.status == 200 else { continue }
                        let mpd = try MPDManifest.parse(answer.body, url: manifest)
                        #expect(mpd.type == .dynamic)
                        // Like a player at the live edge: the newest two segments it has not fetched yet.
                        let segments = try mpd.objects(documentURL: manifest).filter { $0.role == .media }
                        for segment in segments.suffix(2) where fetched.insert(segment.url).inserted {
                            _ = try await TestHTTP.get(segment.url)
                        }
                        try await Task.sleep(for: .milliseconds(500))
                    }
                    return fetched.count
                }
            }
            for try await count in group { #expect(count >= 6, "a player saw only \(count) segments in 40 s") }
        }
        let elapsed = Double((ContinuousClock.now - start).components.seconds)
        let segments = origin.counts.filter { $0.key.hasSuffix(".m4s") && !$0.key.contains("init") }
        #expect(segments.count >= 6)
        for (path, count) in segments {
            #expect(count == 1, "\(path) fetched from the origin \(count) times")
        }
        // One fetch per 2 s period (the players poll every 0.5 s, 20 of them): refreshed, never once per player.
        let fetches = origin.count("/live.mpd")
        #expect(
            fetches >= 2 && Double(fetches) <= elapsed / 2 + 3,
            "\(fetches) origin fetches of the MPD in \(elapsed) s")
        await server.stop()
    }
}
