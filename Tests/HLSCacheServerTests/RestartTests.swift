import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// The cache outlives the process: a clean SIGTERM, and a kill -9 in the middle of a fill.
@Suite("Restarts", .sharedMachine)
struct RestartTests {
    @Test("SIGTERM exits 0, and after a restart a replay sends no segment request to the origin")
    func warmCacheSurvivesRestart() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let directory = ServerProcess.temporaryDirectory()
        let stream = origin.url("/ts-multivariant/master.m3u8")
        let first = try await InProcessServer.start(
            cacheDirectory: directory, arguments: ["--allow-host", "127.0.0.1"])
        let played = try await FFmpeg.framemd5(first.proxied(stream))
        #expect(played.status == 0)
        try await Task.sleep(for: .milliseconds(300))
        let (status, seconds) = await first.stop()
        #expect(status == 0)
        #expect(seconds < 10)
        #expect(first.log.contains("hlscache stopped"))

        let segmentRequests = origin.counts.filter { $0.key.hasSuffix(".ts") }.values.reduce(0, +)
        let second = try await InProcessServer.start(
            cacheDirectory: directory, arguments: ["--allow-host", "127.0.0.1"])
        let replay = try await FFmpeg.framemd5(second.proxied(stream))
        #expect(replay.status == 0)
        #expect(replay.output == played.output)
        #expect(origin.counts.filter { $0.key.hasSuffix(".ts") }.values.reduce(0, +) == segmentRequests)
        await second.stop()
    }

    @Test("after a kill -9 during a fill, the restarted server serves that segment complete and correct")
    func killDuringFill() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        origin.set("/live-source/seg5.ts", .slowSecondHalf(.seconds(30)))
        let directory = ServerProcess.temporaryDirectory()
        let first = try await ServerProcess.start(cacheDirectory: directory, arguments: ["--allow-host", "127.0.0.1"])
        let url = origin.url("/live-source/seg5.ts")
        let request = Task { try? await TestHTTP.get(first.proxied(url)) }
        while origin.count("/live-source/seg5.ts") == 0 { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(300))  // half the body is in the fill's temporary file
        try await offPool { first.kill9() }
        _ = await request.value

        origin.set("/live-source/seg5.ts", nil)
        let second = try await ServerProcess.start(cacheDirectory: directory, arguments: ["--allow-host", "127.0.0.1"])
        let answer = try await TestHTTP.get(second.proxied(url))
        #expect(answer.status == 200)
        #expect(answer.body == origin.file(for: "/live-source/seg5.ts"))
        #expect(origin.count("/live-source/seg5.ts") == 2)
        let killed = "\(first.process.processIdentifier)-"
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory + "/tmp").filter {
            $0.hasPrefix(killed)
        }
        #expect(leftovers.isEmpty, "temporary files of the killed fill: \(leftovers)")
        await second.stop()
    }
}
