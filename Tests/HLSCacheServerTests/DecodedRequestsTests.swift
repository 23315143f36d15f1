import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// The requests of a connection handed to the HTTP/1 decoder (from the first one the front's scanner does not read):
/// each comes back to the front, in its turn, and is answered as the front answers its own.
@Suite("Decoded requests", .sharedMachine)
struct DecodedRequestsTests {
    @Test(
        "a request body over 16 KiB is refused with 413 as soon as it is, and the connection closes; the server goes on"
    )
    func largeBodyIsRefused() async throws {
        try await withServer { server, origin in
            let target = "/o/http/127.0.0.1:\(origin.port)/fmp4/seg1.m4s"
            let port = server.port
            let (answer, closed) = try await offPool { () -> (RawConnection.Answer, Bool) in
                let connection = try RawConnection(port: port, timeout: 10)
                // Ten gigabytes announced, 20 KB sent: the refusal cannot wait for the rest.
                connection.send("POST \(target) HTTP/1.1\r\nHost: h\r\nContent-Length: 10000000000\r\n\r\n")
                connection.send(String(repeating: "x", count: 20_000))
                let answer = try connection.readAnswer()
                return (answer, connection.serverCloses())
            }
            #expect(answer.status == 413, "\(answer.status)")
            #expect(String(decoding: answer.body, as: UTF8.self).contains("16384"))
            #expect(closed)
            #expect(try await TestHTTP.get(server.url("/healthz")).status == 200)
        }
    }

    @Test("a head ending in bare line feeds, the last one sent apart, is refused at once, not at the head timeout")
    func bareLineFeedsSentApart() async throws {
        try await withServer(arguments: ["--request-head-timeout", "30"]) { server, _ in
            let port = server.port
            let answer = try await offPool { () -> RawConnection.Answer in
                let connection = try RawConnection(port: port, timeout: 10)
                connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n")
                Thread.sleep(forTimeInterval: 0.2)
                connection.send("\n")
                return try connection.readAnswer()
            }
            #expect(answer.status == 400)
        }
    }

    @Test("an absolute-form target is read as the origin form it names (RFC 9112 section 3.2.2)")
    func absoluteFormTarget() async throws {
        try await withServer { server, origin in
            let port = server.port
            let path = "/o/http/127.0.0.1:\(origin.port)/fmp4/seg1.m4s"
            let answer = try await offPool { () -> RawConnection.Answer in
                let connection = try RawConnection(port: port, timeout: 10)
                connection.send("GET http://edge.test\(path) HTTP/1.1\r\nHost: edge.test\r\n\r\n")
                return try connection.readAnswer()
            }
            #expect(answer.status == 200)
            #expect(answer.body == origin.file(for: "/fmp4/seg1.m4s"))
        }
    }

    @Test("a closing answer with more sent behind it arrives whole, read late: the close drains, it does not reset")
    func closingAnswerIsNotResetByUnreadInput() async throws {
        let (origin, server, large) = try await HitPathTests.serverWithCachedObject(HitPathTests.largePath)
        defer { origin.stop() }
        let port = server.port
        let (answer, closed) = try await offPool { () -> (RawConnection.Answer, Bool) in
            let connection = try RawConnection(port: port, timeout: 10)
            connection.send(
                RawConnection.request("GET", large, extra: ["Connection: close"])
                    + String(repeating: "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", count: 6_000))
            // The answer (6 MiB) waits in the sockets while the server reads and drops what came after it.
            Thread.sleep(forTimeInterval: 0.5)
            let answer = try connection.readAnswer()
            return (answer, connection.serverCloses())
        }
        #expect(answer.status == 200)
        #expect(sameBytes(answer.body, StreamOrigin.pattern(count: 6_291_456)))
        #expect(closed)
        #expect(server.isRunning)
        await server.stop()
    }

    @Test(
        "on the decoder's connection, a malformed request after a good one: its answer whole, then a 400 and the close")
    func malformedAfterAGoodOne() async throws {
        try await withServer { server, origin in
            let target = "/o/http/127.0.0.1:\(origin.port)/fmp4/seg1.m4s"
            let port = server.port
            let (answers, closed) = try await offPool { () -> ([RawConnection.Answer], Bool) in
                let connection = try RawConnection(port: port, timeout: 10)
                // HTTP/1.0 is the decoder's to read; the second head is not HTTP at all.
                connection.send(
                    "GET \(target) HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + "GET / HTTP/1.1\r\nHo st: x\r\n\r\n")
                let answers = [try connection.readAnswer(), try connection.readAnswer()]
                return (answers, connection.serverCloses())
            }
            #expect(answers.map(\.status) == [200, 400])
            #expect(answers[0].body == origin.file(for: "/fmp4/seg1.m4s"))
            #expect(answers[1].headers["connection"] == "close")
            #expect(closed)
        }
    }

    @Test("a PURGE pipelined between GETs is answered in its turn, and the GET after it misses")
    func purgeInItsTurn() async throws {
        try await withServer(arguments: ["--admin-token", "secret-token-123"]) { server, origin in
            let target = "/o/http/127.0.0.1:\(origin.port)/fmp4/seg1.m4s"
            _ = try await TestHTTP.get(server.url(target))
            try await HitPathTests.waitForEntries(1, on: server)
            let port = server.port
            let answers = try await offPool { () -> [RawConnection.Answer] in
                let connection = try RawConnection(port: port, timeout: 10)
                connection.send(
                    RawConnection.request("GET", target)
                        + RawConnection.request("PURGE", target, extra: ["Authorization: Bearer secret-token-123"])
                        + RawConnection.request("GET", target))
                return try (0..<3).map { _ in try connection.readAnswer() }
            }
            #expect(answers.map(\.status) == [200, 200, 200])
            #expect(answers.map { $0.headers["x-cache"] ?? "" } == ["HIT", "BYPASS", "MISS"])
            #expect(String(decoding: answers[1].body, as: UTF8.self).contains("\"purged\":1"))
            #expect(answers[2].body == origin.file(for: "/fmp4/seg1.m4s"))
        }
    }
}
