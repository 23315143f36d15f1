import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// Many players, one origin request per object.
@Suite("Sharing origin fetches", .serialized, .sharedMachine)
struct SharingTests {
    @Test("50 simultaneous requests for one cold segment: one origin request, 50 correct bodies")
    func fiftyColdRequests() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        origin.set("/live-source/seg3.ts", .delay(.milliseconds(500)))
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1"])
        let url = server.proxied(origin.url("/live-source/seg3.ts"))
        let expected = origin.file(for: "/live-source/seg3.ts")
        let answers = try await withThrowingTaskGroup(of: TestHTTP.Answer.self) { group in
            for _ in 0..<50 { group.addTask { try await TestHTTP.get(url) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 50)
        #expect(answers.allSatisfy { $0.status == 200 && $0.body == expected })
        #expect(origin.count("/live-source/seg3.ts") == 1)
        let metrics = try await TestHTTP.get(server.url("/metrics")).text
        #expect(metrics.contains("hlscache_fills_deduplicated_total"))
        await server.stop()
    }

    @Test("5 ffmpeg players of a live stream for 15 s: each segment fetched once, playlists about once per refresh")
    func livePlayersShareFetches() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1"])
        let url = server.proxied(origin.url("/live/index.m3u8"))
        let start = Date()
        let results = try await withThrowingTaskGroup(of: (Int32, String).self) { group in
            for _ in 0..<5 {
                group.addTask {
                    let result = try await FFmpeg.run([
                        "-nostdin", "-v", "error", "-i", url, "-t", "15", "-map", "0", "-c", "copy", "-f", "null", "-",
                    ])
                    return (result.status, result.errors)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let seconds = Date().timeIntervalSince(start)
        for (status, errors) in results { #expect(status == 0, "\(errors)") }
        let counts = origin.counts
        let segments = counts.filter { $0.key.hasPrefix("/live/seg") }
        #expect(segments.count >= 5, "segments fetched: \(segments)")
        #expect(
            segments.values.allSatisfy { $0 == 1 },
            "segments fetched more than once: \(segments.filter { $0.value > 1 })")
        // Fresh for half the 2 s target duration: about one fetch per second however many players.
        let playlistFetches = counts["/live/index.m3u8"] ?? 0
        #expect(playlistFetches <= Int(seconds / 1.0) + 3, "\(playlistFetches) playlist fetches in \(seconds) s")
        await server.stop()
    }

    @Test("identical concurrent LL-HLS blocking reloads share one origin request, cached per exact query")
    func blockingReloadsShareOneRequest() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        // The origin holds the reload longer than a loaded machine takes to start ten requests.
        origin.set("/live/index.m3u8", .delay(.milliseconds(1500)))
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1"])
        let blocking = server.proxied(origin.url("/live/index.m3u8?_HLS_msn=3&_HLS_part=0"))
        let answers = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<10 { group.addTask { try await TestHTTP.get(blocking).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers == Array(repeating: 200, count: 10))
        #expect(origin.targets.filter { $0.contains("_HLS_msn=3&_HLS_part=0") }.count == 1)
        _ = try await TestHTTP.get(server.proxied(origin.url("/live/index.m3u8?_HLS_msn=4&_HLS_part=0")))
        #expect(origin.targets.filter { $0.contains("_HLS_msn=4") }.count == 1)
        await server.stop()
    }
}
