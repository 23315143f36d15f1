import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// HTTP/2 in cleartext by prior knowledge (`h2c`, RFC 9113 section 3.3): a connection to the cleartext port that opens
/// with HTTP/2's preface is served as HTTP/2, by the same engine as HTTP/1 and as h2 over TLS; every other connection
/// stays HTTP/1.
@Suite("h2c by prior knowledge", .serialized, .sharedMachine)
struct H2CTests {
    @Test(
        "curl --http2-prior-knowledge and h2load on the cleartext port: the same answers as HTTP/1, logged and counted as h2"
    )
    func priorKnowledgeServesTheSameAnswers() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let playlistPath = "/o/http/127.0.0.1:\(origin.port)/ts-multivariant/hi/index.m3u8"
        let segmentPath = "/o/http/127.0.0.1:\(origin.port)/ts-multivariant/hi/seg1.ts"
        let overH1 = try await Curl.get(server.url(playlistPath))
        let overH2 = try await Curl.get(server.url(playlistPath), ["--http2-prior-knowledge"])
        #expect(overH1.status == 200 && overH1.httpVersion == "1.1", "\(overH1.errors)")
        #expect(overH2.status == 200 && overH2.httpVersion == "2", "\(overH2.errors)")
        #expect(overH2.body == overH1.body)
        let miss = try await Curl.get(server.url(segmentPath), ["--http2-prior-knowledge"])
        #expect(miss.status == 200 && miss.httpVersion == "2")
        #expect(miss.body == origin.file(for: "/ts-multivariant/hi/seg1.ts"))
        // The connection's CMSD-Dynamic, as on HTTP/1: the node's name, with what the kernel measured.
        #expect(miss.headers["cmsd-dynamic"]?.hasPrefix("\"") == true, "\(miss.headers)")
        try await HitPathTests.waitForEntries(2, on: server)
        let load = try await ChildProcess.run(
            "/usr/bin/h2load", ["-n", "200", "-c", "2", "-m", "20", server.url(segmentPath)], timeout: 120)
        #expect(load.status == 0, "\(load.errors)")
        #expect(load.output.contains("200 succeeded"), "\(load.output)")
        #expect(load.output.contains("status codes: 200 2xx"), "\(load.output)")
        #expect(origin.count("/ts-multivariant/hi/seg1.ts") == 1)
        let log = try await server.settledLog()
        let segmentLines = log.split(separator: "\n").filter { $0.contains("/ts-multivariant/hi/seg1.ts") }
        #expect(segmentLines.count == 201, "\(segmentLines.count)")
        #expect(segmentLines.allSatisfy { $0.contains(" proto=h2 status=200") }, "\(segmentLines.prefix(2))")
        let playlistLines = log.split(separator: "\n").filter { $0.contains("/ts-multivariant/hi/index.m3u8") }
        #expect(playlistLines.map { $0.contains(" proto=http/1.1 ") } == [true, false], "\(playlistLines)")
        #expect(
            try await server.metric(#"hlscache_requests_total{kind="segment",cache="hit",protocol="h2"}"#) == 200)
        #expect(
            try await server.metric(#"hlscache_requests_total{kind="playlist",cache="hit",protocol="http/1.1"}"#)
                + server.metric(#"hlscache_requests_total{kind="playlist",cache="miss",protocol="http/1.1"}"#) == 1)
        await server.stop()
    }

    @Test("the preface sent a byte at a time is still HTTP/2; a request starting with P is still HTTP/1")
    func prefaceInPiecesAndLookalikes() async throws {
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1"])
        let port = server.port
        let settingsFrameType: UInt8 = 0x4
        let (http2, http1) = try await Task.detached {
            let connection = try RawConnection(port: port, timeout: 10)
            for byte in Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) {
                connection.send([byte])
                usleep(2000)
            }
            // An empty SETTINGS frame: the server answers with its own SETTINGS first.
            connection.send([0, 0, 0, settingsFrameType, 0, 0, 0, 0, 0])
            let frameHead = try connection.read(upTo: 9)
            let lookalike = try RawConnection(port: port, timeout: 10)
            lookalike.send(RawConnection.request("PUT", "/healthz"))
            let answer = try lookalike.readAnswer()
            return (frameHead, answer.status)
        }.value
        #expect(http2.count == 9 && http2[3] == settingsFrameType, "\(http2)")
        #expect(http1 == 405)
        // The server goes on serving HTTP/1.
        #expect(try await TestHTTP.get(server.url("/healthz")).status == 200)
        await server.stop()
    }

    @Test("garbage after the preface: the connection gets its SETTINGS and a GOAWAY, then is closed")
    func garbageAfterThePrefaceIsAConnectionError() async throws {
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1"])
        let port = server.port
        let frameTypes = try await Task.detached { () -> [UInt8] in
            let connection = try RawConnection(port: port, timeout: 10)
            connection.send(Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + [UInt8](repeating: 0xFF, count: 64))
            let bytes = try connection.read(upTo: 1 << 16)
            var types: [UInt8] = []
            var offset = 0
            while offset + 9 <= bytes.count {
                let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
                types.append(bytes[offset + 3])
                offset += 9 + length
            }
            return types
        }.value
        // SETTINGS (4) first, GOAWAY (7) before the close: the framing layer's error is flushed, not dropped.
        #expect(frameTypes.first == 4 && frameTypes.contains(7), "\(frameTypes)")
        #expect(try await TestHTTP.get(server.url("/healthz")).status == 200)
        await server.stop()
    }

    @Test("a connection that answered an HTTP/1 request does not turn into HTTP/2 on a later preface")
    func prefaceOnlyFirst() async throws {
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1"])
        let port = server.port
        let (first, second) = try await Task.detached {
            let connection = try RawConnection(port: port, timeout: 10)
            connection.send(RawConnection.request("GET", "/healthz"))
            let first = try connection.readAnswer()
            connection.send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            let second = connection.readResponseHead()
            return (first.status, second)
        }.value
        #expect(first == 200)
        #expect(second?.hasPrefix("HTTP/1.1 4") == true || second?.hasPrefix("HTTP/1.1 5") == true, "\(second ?? "-")")
        await server.stop()
    }
    @Test("1,000 LL-HLS blocking reloads on one h2c connection: parked with no task each, the origin asked once")
    func thousandBlockingReloadsOnOneConnection() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        // Held long enough for h2load to start and open its thousand streams on a machine busy with other suites.
        origin.set("/live/index.m3u8", .delay(.seconds(8)))
        let server = try await InProcessServer.start(arguments: [
            "--allow-host", "127.0.0.1", "--read-ahead", "0", "--http2-max-streams", "1000",
        ])
        let url = server.proxied(origin.url(ParkedReloadTests.reload))
        let first = try await ParkedReloadTests.startFill(url, origin: origin)
        let load = try await ChildProcess.run(
            "/usr/bin/h2load", ["-n", "1000", "-c", "1", "-m", "1000", url], timeout: 120)
        #expect(load.status == 0, "\(load.errors)")
        #expect(load.output.contains("1000 succeeded"), "\(load.output)")
        #expect(load.output.contains("status codes: 1000 2xx"), "\(load.output)")
        let leader = try await first.value
        #expect(leader.status == 200)
        #expect(origin.targets.filter { $0.contains("_HLS_msn=3&_HLS_part=0") }.count == 1, "\(origin.targets)")
        #expect(try await server.metric("hlscache_parked_requests_total") >= 1000)
        await server.stop()
    }
}
