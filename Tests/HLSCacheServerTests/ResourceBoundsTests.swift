import Foundation
import HLSCacheTesting
import Testing

/// A small hostile playlist cannot make a huge answer, and a large allowed one costs bounded memory and one
/// rendering per origin version.
@Suite("Resource bounds", .serialized)
struct ResourceBoundsTests {
    /// 83 KB: one 60,000-character variable used 15 times in each of 300 URIs (a 270 MB answer if expanded).
    static let defineBomb: String = {
        var lines = [
            "#EXTM3U", "#EXT-X-DEFINE:NAME=\"v\",VALUE=\"\(String(repeating: "a", count: 60_000))\"",
            "#EXT-X-TARGETDURATION:4", "#EXT-X-PLAYLIST-TYPE:VOD",
        ]
        for index in 0..<300 { lines += ["#EXTINF:4,", "s" + String(repeating: "{$v}", count: 15) + "\(index).ts"] }
        return (lines + ["#EXT-X-ENDLIST"]).joined(separator: "\n") + "\n"
    }()

    /// 700,000 segments, about 15 MB: built on a thread of its own (seconds in a debug build), not on the
    /// concurrency pool that the in-process origins need.
    static func hugePlaylist() async throws -> String {
        try await offPool {
            var text = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PLAYLIST-TYPE:VOD\n"
            text.reserveCapacity(15_000_000)
            for index in 0..<700_000 { text += "#EXTINF:4,\n\(index).ts\n" }
            return text + "#EXT-X-ENDLIST\n"
        }
    }

    static let peakLimit = 200 << 20

    @Test("an EXT-X-DEFINE expansion bomb answers 502 with a reason, in bounded memory")
    func defineBombIsRefused() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        origin.set("/bomb.m3u8", .body(Self.defineBomb, contentType: "application/vnd.apple.mpegurl"))
        let server = try await ServerProcess.start(arguments: HardeningTests.loopback)
        let answer = try await TestHTTP.get(server.proxied(origin.url("/bomb.m3u8")))
        #expect(answer.status == 502)
        #expect(
            answer.text.contains("URI longer than 16384 bytes after variable substitution (line 6)"), "\(answer.text)")
        // Expanding the bomb before refusing it would take gigabytes.
        #expect(server.peakMemory < Self.peakLimit, "peak \(server.peakMemory >> 20) MiB")
        #expect(server.process.isRunning)
        await server.stop()
    }

    @Test("a 700,000-segment playlist is rendered once per version, kept on disk, in bounded memory")
    func hugePlaylistIsRenderedOnce() async throws {
        try await checkRenderedOnceOnDisk(
            playlist: try await Self.hugePlaylist(), lastSegment: "699999.ts", eventLoopHits: true, arguments: [])
    }

    @Test("with --no-event-loop-hits a rendering kept on disk is streamed by the responder, rendered once")
    func renderingOnDiskThroughTheResponder() async throws {
        // A 64 KiB memory tier keeps no rendering over 4 KiB in memory: this 100-segment one goes to disk.
        var playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        for index in 0..<100 { playlist += "#EXTINF:4,\n\(index).ts\n" }
        try await checkRenderedOnceOnDisk(
            playlist: playlist + "#EXT-X-ENDLIST\n", lastSegment: "99.ts", eventLoopHits: false,
            arguments: ["--memory-cache-size", "64KiB"])
    }

    private func checkRenderedOnceOnDisk(
        playlist: String, lastSegment: String, eventLoopHits: Bool, arguments: [String]
    ) async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        origin.set("/huge.m3u8", .body(playlist, contentType: "application/vnd.apple.mpegurl"))
        let server = try await ServerProcess.start(
            arguments: HardeningTests.loopback + arguments + (eventLoopHits ? [] : ["--no-event-loop-hits"]))
        let url = server.proxied(origin.url("/huge.m3u8"))
        // Through curl into files, compared off the concurrency pool: tens of megabytes.
        let directory = ServerProcess.temporaryDirectory()
        let first = try await TestHTTP.download(url, to: directory + "/0")
        #expect(first.status == 200)
        let ending = "/o/http/127.0.0.1:\(origin.port)/\(lastSegment)\n#EXT-X-ENDLIST\n"
        let endsRight = try await offPool {
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: directory + "/0"))
            defer { try? handle.close() }
            let size = try handle.seekToEnd()
            try handle.seek(toOffset: size - UInt64(ending.utf8.count))
            return handle.readDataToEndOfFile() == Data(ending.utf8)
        }
        #expect(endsRight)
        // The rendering is kept once the first answer has been written and stored (a moment later under load):
        // until then an answer joins it (MISS); from then on, three hits.
        var hits = 0
        var index = 0
        while hits < 3 {
            index += 1
            try #require(index <= 40, "no three hits in 40 requests")
            let copy = directory + "/\(index)"
            let again = try await TestHTTP.download(url, to: copy)
            #expect(again.status == 200)
            let same = try await offPool { FileManager.default.contentsEqual(atPath: directory + "/0", andPath: copy) }
            #expect(same)
            if again.headers["x-cache"] == "HIT" {
                hits += 1
            } else {
                #expect(hits == 0, "a miss after a hit: \(again.headers["x-cache"] ?? "no X-Cache")")
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try? FileManager.default.removeItem(atPath: directory)
        #expect(try await server.metric("hlscache_playlist_renders_total") == 1)
        #expect(origin.count("/huge.m3u8") == 1)
        let sendfileHits = try await server.metric(#"hlscache_event_loop_hits_total{body="sendfile"}"#)
        #expect(eventLoopHits ? sendfileHits == 3 : sendfileHits == 0)
        #expect(server.peakMemory < Self.peakLimit, "peak \(server.peakMemory >> 20) MiB")
        // Kept in one unlinked file the server holds open: nothing on disk outlives it.
        let descriptors = "/proc/\(server.process.processIdentifier)/fd"
        let renderings = try FileManager.default.contentsOfDirectory(atPath: descriptors).filter { name in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: descriptors + "/" + name)) ?? ""
            return target.contains("/tmp/rendered-") && target.hasSuffix("(deleted)")
        }
        #expect(renderings.count == 1)
        await server.stop()
    }
}
