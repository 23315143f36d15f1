import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Synchronization
import Testing

/// Misses the front answers (`ConnectionFront+Planned`): the front that started the fill writes the answer as the fill
/// brings it, and keeps the connection's order and the body's integrity.
@Suite("Front misses", .sharedMachine)
struct FrontMissTests {
    /// An origin on its own threads: `/slow.ts` sends its head and half of its body, then the rest once `release` is
    /// set; `/chunked.ts` a chunked body without a length, `/cut-chunked.ts` one that ends before its last chunk;
    /// anything else `hit body` with a day's freshness.
    private static func origin(release: Flag, halfSent: Flag) throws -> RawOrigin {
        try RawOrigin { _, connection in
            guard let request = connection.readRequest() else { return }
            let head = "HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nCache-Control: max-age=86400\r\n"
            if request.contains("/slow.ts") {
                _ = connection.send(head + "Content-Length: \(slowBody.count)\r\n\r\n")
                _ = connection.send(Array(slowBody[..<(slowBody.count / 2)]))
                halfSent.set()
                let deadline = Date().addingTimeInterval(20)
                while !release.isSet, Date() < deadline { usleep(5_000) }
                _ = connection.send(Array(slowBody[(slowBody.count / 2)...]))
            } else if request.contains("chunked.ts") {
                _ = connection.send(head + "Transfer-Encoding: chunked\r\n\r\n")
                for piece in stride(from: 0, to: slowBody.count, by: 40_000) {
                    let chunk = Array(slowBody[piece..<min(piece + 40_000, slowBody.count)])
                    _ = connection.send(String(chunk.count, radix: 16) + "\r\n")
                    _ = connection.send(chunk)
                    _ = connection.send("\r\n")
                }
                if !request.contains("/cut-") { _ = connection.send("0\r\n\r\n") }
            } else {
                _ = connection.send(head + "Content-Length: 8\r\n\r\nhit body")
            }
            usleep(50_000)
            connection.close()
        }
    }

    /// ``origin(release:halfSent:)`` with `/slow.ts` sent whole at once.
    private static func unheldOrigin() throws -> RawOrigin {
        let release = Flag()
        release.set()
        return try origin(release: release, halfSent: Flag())
    }

    /// The body of `/slow.ts` and of the chunked answers.
    private static let slowBody = StreamOrigin.pattern(count: 300_000)

    @Test(
        "a miss the front started is answered there, whole and byte-exact, on the decoder's connection too")
    func frontAnswersTheMissItStarted() async throws {
        let origin = try Self.unheldOrigin()
        defer { origin.stop() }
        for frontAnswers in [true, false] {
            let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
            // `Proxy-Connection` is the decoder's to read: that connection's requests come to the front through it.
            let extra = frontAnswers ? [] : ["Proxy-Connection: keep-alive"]
            let target = "/o/http/127.0.0.1:\(origin.port)/slow.ts"
            let connection = try RawConnection(port: server.port, timeout: 20)
            let miss = try await offPool {
                connection.send(RawConnection.request("GET", target, extra: extra))
                return try connection.readAnswer()
            }
            // Then, once the entry is published, a hit on the same connection.
            try await HitPathTests.waitForEntries(1, on: server)
            let hit = try await offPool {
                connection.send(RawConnection.request("GET", target, extra: extra))
                return try connection.readAnswer()
            }
            let answers = [miss, hit]
            #expect(answers.map { $0.headers["x-cache"] ?? "" } == ["MISS", "HIT"], "front: \(frontAnswers)")
            #expect(answers.allSatisfy { TestBytes.equal($0.body, Self.slowBody) }, "front: \(frontAnswers)")
            #expect(try await server.metric("hlscache_front_misses_total") == 1, "front: \(frontAnswers)")
            #expect(try await server.metric("hlscache_responder_connections_total") == (frontAnswers ? 0 : 1))
            await server.stop()
        }
    }

    @Test("a request sent while a miss streams waits for it: both answered, in order, the miss whole")
    func requestBehindAStreamingMissWaits() async throws {
        let release = Flag()
        let halfSent = Flag()
        let origin = try Self.origin(release: release, halfSent: halfSent)
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let hit = "/o/http/127.0.0.1:\(origin.port)/small.ts"
        #expect(try await TestHTTP.get(server.url(hit)).text == "hit body")
        // Its answer ends before its entry is published (synced and renamed): a request in between is a MISS that
        // joins the fill, as a CI run once saw.
        try await HitPathTests.waitForEntries(1, on: server)
        let miss = "/o/http/127.0.0.1:\(origin.port)/slow.ts"
        let port = server.port
        let answers = try await offPool { () -> [RawConnection.Answer] in
            let connection = try RawConnection(port: port, timeout: 20)
            connection.send(RawConnection.request("GET", miss))
            // Half the miss is on its way; the hit is asked for behind it, then the origin sends the rest.
            let deadline = Date().addingTimeInterval(10)
            while !halfSent.isSet, Date() < deadline { usleep(5_000) }
            usleep(100_000)
            connection.send(RawConnection.request("GET", hit))
            usleep(200_000)
            release.set()
            return [try connection.readAnswer(), try connection.readAnswer()]
        }
        #expect(answers.map(\.status) == [200, 200])
        #expect(answers.map { $0.headers["x-cache"] ?? "" } == ["MISS", "HIT"])
        #expect(TestBytes.equal(answers[0].body, Self.slowBody))
        #expect(answers[1].body == Array("hit body".utf8))
        // The hit's own first request was a miss too.
        #expect(try await server.metric("hlscache_front_misses_total") == 2)
        await server.stop()
    }

    @Test("a miss of unknown length goes in chunks, whole; one the origin cuts never ends cleanly")
    func unknownLengthIsChunkedAndACutShows() async throws {
        let origin = try Self.unheldOrigin()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let whole = try await TestHTTP.get(server.proxied(origin.url("/chunked.ts")))
        #expect(whole.status == 200)
        #expect(whole.header("transfer-encoding") == "chunked")
        #expect(whole.header("x-cache") == "MISS")
        #expect(TestBytes.equal(whole.body, Self.slowBody))
        await #expect(throws: (any Error).self) {
            _ = try await TestHTTP.get(server.proxied(origin.url("/cut-chunked.ts")))
        }
        #expect(try await server.metric("hlscache_front_misses_total") == 2)
        #expect(server.isRunning)
        await server.stop()
    }

    @Test("to an HTTP/1.0 client a miss of unknown length is answered unchunked, whole, and ends with the connection")
    func http10UnknownLengthEndsWithTheConnection() async throws {
        let origin = try Self.unheldOrigin()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let target = "/o/http/127.0.0.1:\(origin.port)/chunked.ts"
        let port = server.port
        let (head, body, closed) = try await offPool { () -> (String, [UInt8], Bool) in
            let connection = try RawConnection(port: port, timeout: 20)
            // Keep-alive asked for, and still closed: an HTTP/1.0 client can tell the end of this body no other way.
            connection.send("GET \(target) HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            let head = connection.readResponseHead() ?? ""
            let body = try connection.read(upTo: 1 << 20)
            return (head, body, connection.serverCloses())
        }
        #expect(head.hasPrefix("HTTP/1.0 200"), "\(head)")
        #expect(!head.lowercased().contains("transfer-encoding"), "\(head)")
        let lines = head.lowercased().split(whereSeparator: \.isNewline)
        #expect(!lines.contains { $0.hasPrefix("content-length:") }, "no length: the body ends with the connection")
        #expect(head.lowercased().contains("connection: close"), "\(head)")
        #expect(TestBytes.equal(body, Self.slowBody))
        #expect(closed)
        #expect(server.isRunning)
        await server.stop()
    }

    @Test("a HEAD of a miss of unknown length gives no length, not Content-Length: 0, on both readers")
    func headOfUnknownLength() async throws {
        let origin = try Self.unheldOrigin()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let port = server.port
        for (index, extra) in [[], ["Proxy-Connection: keep-alive"]].enumerated() {
            let target = "/o/http/127.0.0.1:\(origin.port)/chunked.ts?head=\(index)"
            let head = try await offPool { () -> String in
                let connection = try RawConnection(port: port, timeout: 20)
                connection.send(RawConnection.request("HEAD", target, extra: extra))
                return connection.readResponseHead() ?? ""
            }
            #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
            let lines = head.lowercased().split(whereSeparator: \.isNewline)
            #expect(!lines.contains { $0.hasPrefix("content-length:") }, "\(head)")
        }
        await server.stop()
    }

    @Test("a player that leaves during a miss is logged as 499, not as a failed fetch; the fill goes on")
    func playerLeavingIsNotAFailure() async throws {
        let release = Flag()
        let halfSent = Flag()
        let origin = try Self.origin(release: release, halfSent: halfSent)
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let port = server.port
        let target = "/o/http/127.0.0.1:\(origin.port)/slow.ts"
        try await offPool {
            let connection = try RawConnection(port: port, timeout: 20)
            connection.send(RawConnection.request("GET", target))
            let deadline = Date().addingTimeInterval(10)
            while !halfSent.isSet, Date() < deadline { usleep(5_000) }
            connection.reset()
        }
        release.set()
        try await HitPathTests.waitForEntries(1, on: server)
        let hit = try await TestHTTP.get(server.url(target))
        #expect(hit.header("x-cache") == "HIT" && TestBytes.equal(hit.body, Self.slowBody))
        let log = try await server.settledLog()
        #expect(!log.contains("fetch failed"), "\(log)")
        await server.stop()
    }
}
