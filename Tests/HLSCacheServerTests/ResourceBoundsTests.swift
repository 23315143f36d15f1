import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Synchronization
import Testing

/// A small hostile playlist cannot make a huge answer, and a large allowed one costs bounded memory and one
/// rendering per origin version.
@Suite("Resource bounds", .serialized, .sharedMachine)
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

    @Test(
        "a large answer the cache does not keep (no-store, or larger than the cache), its player not reading yet, is held on disk, not in memory; then read whole",
        arguments: [true, false])
    func notKeptAnswerIsBufferedOnDisk(noStore: Bool) async throws {
        let megabytes = 96
        let mebibyte = StreamOrigin.pattern(count: 1 << 20)
        let sent = Atomic(false)
        let origin = try RawOrigin { _, connection in
            guard connection.readRequest() != nil else { return }
            connection.send(
                "HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\n"
                    + "Cache-Control: \(noStore ? "no-store" : "max-age=3600")\r\n"
                    + "Content-Length: \(megabytes << 20)\r\n\r\n")
            for _ in 0..<megabytes { guard connection.send(mebibyte) else { return } }
            sent.store(true, ordering: .releasing)
            _ = connection.waitForPeerClose(timeout: .seconds(60))
        }
        defer { origin.stop() }
        // The cache's bound is a third of the answer when it is cacheable.
        let server = try await ServerProcess.start(
            arguments: HardeningTests.loopback + (noStore ? [] : ["--max-cache-size", "32MiB"]))
        let connection = try RawConnection(port: server.port)
        connection.send(RawConnection.request("GET", "/o/http/127.0.0.1:\(origin.port)/big.ts"))
        let head = try #require(connection.readResponseHead())
        #expect(head.lowercased().contains("x-cache: bypass"), "\(head)")
        // The origin sends it all while the player reads nothing.
        #expect(try await eventually(timeout: .seconds(60)) { sent.load(ordering: .acquiring) })
        try await Task.sleep(for: .milliseconds(300))
        #expect(server.peakMemory < 100 << 20, "peak \(server.peakMemory >> 20) MiB for a \(megabytes) MiB answer")
        var received = 0
        var mismatches = 0
        var pending: [UInt8] = []
        while received < megabytes << 20 {
            let bytes = try connection.read(upTo: 1 << 20)
            guard !bytes.isEmpty else { break }
            received += bytes.count
            pending += bytes
            while pending.count >= 1 << 20 {
                if !TestBytes.equal(pending[..<(1 << 20)], mebibyte[...]) { mismatches += 1 }
                pending.removeFirst(1 << 20)
            }
        }
        #expect(received == megabytes << 20 && mismatches == 0, "\(received) bytes, \(mismatches) MiB differ")
        #expect(server.process.isRunning)
        #expect(try await server.metric("hlscache_cache_entries") == 0)
        await server.stop()
    }

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

    @Test("on a connection the decoder reads, a rendering kept on disk is sent from disk, rendered once")
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
        let server = try await ServerProcess.start(arguments: HardeningTests.loopback + arguments)
        // `Proxy-Connection` is the decoder's to read: with it, the responder answers every request.
        let fields = eventLoopHits ? [] : ["Proxy-Connection: keep-alive"]
        let url = server.proxied(origin.url("/huge.m3u8"))
        // Through curl into files, compared off the concurrency pool: tens of megabytes.
        let directory = ServerProcess.temporaryDirectory()
        let first = try await TestHTTP.download(url, to: directory + "/0", headers: fields)
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
            let again = try await TestHTTP.download(url, to: copy, headers: fields)
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
        #expect(sendfileHits == 3, "read by the decoder: \(!eventLoopHits)")
        #expect(server.peakMemory < Self.peakLimit, "peak \(server.peakMemory >> 20) MiB")
        // Kept in one unlinked file the server holds open: nothing on disk outlives it. (The last answer's own
        // descriptor of it is closed just after its last byte: a loaded machine once showed both.)
        let descriptors = "/proc/\(server.process.processIdentifier)/fd"
        var renderings: [String] = []
        #expect(
            try await eventually {
                renderings =
                    ((try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []).filter { name in
                        let target =
                            (try? FileManager.default.destinationOfSymbolicLink(atPath: descriptors + "/" + name)) ?? ""
                        return target.contains("/tmp/rendered-") && target.hasSuffix("(deleted)")
                    }
                return renderings.count == 1
            }, "\(renderings.count) descriptors of unlinked renderings")
        await server.stop()
    }
}
