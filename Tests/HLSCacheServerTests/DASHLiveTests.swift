import DASHManifest
import Foundation
import HLSCacheTesting
import Testing

/// A live DASH stream, packaged in real time by ffmpeg, watched by 20 players through hlscache.
@Suite("Live DASH through hlscache", .serialized)
struct DASHLiveTests {
    @Test("20 players of ffmpeg's live DASH: every segment fetched from the origin once, the MPD once per period")
    func twentyPlayers() async throws {
        let folder = URL(fileURLWithPath: ServerProcess.temporaryDirectory())
        // 1 s segments, five in the window, minimumUpdatePeriod 2 s, written as the clock runs.
        let packager = try ChildProcess(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=10:duration=30",
                "-c:v", "libx264", "-preset", "ultrafast", "-g", "10", "-keyint_min", "10", "-sc_threshold", "0",
                "-f", "dash", "-seg_duration", "1", "-window_size", "5", "-update_period", "2",
                folder.appendingPathComponent("live.mpd").path,
            ])
        defer { packager.send(SIGKILL) }
        #expect(
            try await eventually(timeout: .seconds(20)) {
                FileManager.default.fileExists(atPath: folder.appendingPathComponent("live.mpd").path)
            }, "ffmpeg did not start packaging: \(packager.errors)")
        let origin = StreamOrigin(root: folder)
        try await origin.start()
        defer { origin.stop() }
        let server = try await ServerProcess.start(arguments: ["--allow-host", "127.0.0.1", "--prefetch", "0"])
        let manifest = server.proxied(origin.url("/live.mpd"))
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    var fetched: Set<String> = []
                    while ContinuousClock.now - start < .seconds(10) {
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
            for try await count in group { #expect(count >= 5, "a player saw only \(count) segments") }
        }
        let segments = origin.counts.filter { $0.key.hasSuffix(".m4s") && !$0.key.contains("init") }
        #expect(segments.count >= 5)
        for (path, count) in segments {
            #expect(count == 1, "\(path) fetched from the origin \(count) times")
        }
        // 10 s at one fetch per 2 s: about 5; never one per player.
        let fetches = origin.count("/live.mpd")
        #expect((3...8).contains(fetches), "\(fetches) origin fetches of the MPD")
        await server.stop()
    }
}
