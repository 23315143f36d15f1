import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// Real streams played by ffmpeg through hlscache: the same packets as from the origin, and a second play
/// served entirely from the cache.
@Suite("Playback through hlscache", .sharedMachine)
struct PlaybackTests {
    static let streams = [
        "ts-multivariant/master.m3u8", "fmp4/index.m3u8", "byterange/index.m3u8", "aes128/index.m3u8",
        "alt-audio/master.m3u8",
    ]

    @Test("plays each stream with the origin's packets, and a second play sends no origin request", arguments: streams)
    func playsLikeTheOriginThenFromCache(stream: String) async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])

        let direct = try await FFmpeg.framemd5(origin.url("/" + stream))
        #expect(direct.status == 0, "ffmpeg on the origin: \(direct.errors)")
        let directRequests = origin.total

        let first = try await FFmpeg.framemd5(server.proxied(origin.url("/" + stream)))
        #expect(first.status == 0, "ffmpeg through hlscache: \(first.errors)")
        #expect(first.output == direct.output)
        #expect(first.output.split(separator: "\n").count > 20)
        #expect(origin.total > directRequests)

        // The fill publishes once its body ends; give the last one a moment.
        try await Task.sleep(for: .milliseconds(300))
        let before = origin.total
        let second = try await FFmpeg.framemd5(server.proxied(origin.url("/" + stream)))
        #expect(second.status == 0, "second play: \(second.errors)")
        #expect(second.output == direct.output)
        #expect(origin.total == before, "second play asked the origin for: \(origin.counts)")
        await server.stop()
    }

    @Test("reverse mode stands in for the origin host and rewrites its URIs to plain paths")
    func reverseMode() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--origin", origin.url("/")])

        let master = try await TestHTTP.get(server.url("/ts-multivariant/master.m3u8"))
        #expect(master.status == 200)
        #expect(master.header("content-type") == "application/vnd.apple.mpegurl")
        #expect(master.text.contains("\n/ts-multivariant/hi/index.m3u8\n"))
        let direct = try await FFmpeg.framemd5(origin.url("/ts-multivariant/master.m3u8"))
        let proxied = try await FFmpeg.framemd5(server.url("/ts-multivariant/master.m3u8"))
        #expect(proxied.status == 0, "\(proxied.errors)")
        #expect(proxied.output == direct.output)
        await server.stop()
    }

    @Test("GStreamer's hlsdemux plays TS, fMP4 and AES-128 streams through hlscache, every video frame")
    func gstreamerPlays() async throws {
        try await withServer { server, origin in
            func frames(_ uri: String) async throws -> Int {
                let (frames, result) = try await GStreamer.videoFrames(uri)
                #expect(result.status == 0, "\(uri): \(result.errors)")
                return frames
            }
            for stream in ["ts-multivariant/hi/index.m3u8", "fmp4/index.m3u8", "aes128/index.m3u8"] {
                let direct = try await frames(origin.url("/" + stream))
                let proxied = try await frames(server.proxied(origin.url("/" + stream)))
                #expect(direct == 60, "\(stream): \(direct) frames played from the origin (6 s at 10 fps)")
                #expect(proxied == direct, "\(stream)")
            }
        }
    }
}
