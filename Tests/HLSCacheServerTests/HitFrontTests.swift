import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// Hits answered from the connection's bytes, in front of the HTTP/1 decoder (`ConnectionFront`): a head split across
/// reads is still one, and a connection whose requests went to the decoder comes back once they are answered, or
/// stays with the decoder after a request only it can read.
@Suite("Hit front", .sharedMachine)
struct HitFrontTests {
    /// A small fMP4 segment of ``StreamOrigin``.
    static let segment = "/fmp4/seg1.m4s"

    /// Every hit the event loop answered, whatever its body.
    private static func eventLoopHits(_ server: any RunningServer) async throws -> Double {
        var total = 0.0
        for body in ["none", "memory", "sendfile"] {
            total += try await server.metric(#"hlscache_event_loop_hits_total{body="\#(body)"}"#)
        }
        return total
    }

    /// A server (no read-ahead) whose cache holds ``segment`` of `origin`, and that segment's proxied target.
    private static func serverWithCachedSegment(_ origin: StreamOrigin) async throws -> (any RunningServer, String) {
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let target = "/o/http/127.0.0.1:\(origin.port)\(segment)"
        _ = try await TestHTTP.get(server.url(target))
        try await HitPathTests.waitForEntries(1, on: server)
        return (server, target)
    }

    @Test("a head arriving a few bytes at a time is answered on the event loop")
    func splitHeadIsAnswered() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let (server, target) = try await Self.serverWithCachedSegment(origin)
        let before = try await Self.eventLoopHits(server)
        let port = server.port
        let answer = try await offPool { () -> RawConnection.Answer in
            let connection = try RawConnection(port: port, timeout: 10)
            let bytes = Array(RawConnection.request("GET", target).utf8)
            for start in stride(from: 0, to: bytes.count, by: 5) {
                connection.send(Array(bytes[start..<min(start + 5, bytes.count)]))
                usleep(2_000)
            }
            return try connection.readAnswer()
        }
        #expect(answer.status == 200)
        #expect(answer.headers["x-cache"] == "HIT")
        #expect(answer.body == origin.file(for: Self.segment))
        #expect(try await Self.eventLoopHits(server) == before + 1)
        #expect(try await server.metric("hlscache_front_hits_total") == 1)
        await server.stop()
    }

    @Test("after a miss is answered, the next hit on the connection is the event loop's again")
    func connectionComesBackAfterAMiss() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let (server, hit) = try await Self.serverWithCachedSegment(origin)
        let miss = "/o/http/127.0.0.1:\(origin.port)/fmp4/seg2.m4s"
        let port = server.port
        let answers = try await offPool { () -> [RawConnection.Answer] in
            let connection = try RawConnection(port: port, timeout: 10)
            return try [miss, hit, hit].map { target in
                connection.send(RawConnection.request("GET", target))
                return try connection.readAnswer()
            }
        }
        #expect(answers.map { $0.headers["x-cache"] ?? "" } == ["MISS", "HIT", "HIT"])
        #expect(answers[0].body == origin.file(for: "/fmp4/seg2.m4s"))
        #expect(answers[1].body == origin.file(for: Self.segment))
        #expect(try await Self.eventLoopHits(server) == 2)
        #expect(try await server.metric("hlscache_front_hits_total") == 2)
        await server.stop()
    }

    @Test("a connection read here goes on being read: hits, misses, and pipelined bursts of both, answered in order")
    func readsGoOnAcrossHitsMissesAndBursts() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let (server, hit) = try await Self.serverWithCachedSegment(origin)
        let base = "/o/http/127.0.0.1:\(origin.port)"
        let port = server.port
        // Each miss a new object; the front asks for every read itself while nothing it handed on is in hand, and
        // through the whole pipeline while a miss is with the responder.
        let plan: [[String]] = [
            [hit], ["/large/1001.ts"], [hit], [hit, "/large/1002.ts", hit, "/large/1003.ts"], [hit], [hit, hit, hit],
            ["/large/1004.ts", "/large/1005.ts"], [hit],
        ]
        let answers = try await offPool { () -> [[RawConnection.Answer]] in
            let connection = try RawConnection(port: port, timeout: 10)
            return try plan.map { burst in
                let targets = burst.map { $0.hasPrefix("/large/") ? base + $0 : $0 }
                connection.send(targets.map { RawConnection.request("GET", $0) }.joined())
                return try targets.map { _ in try connection.readAnswer() }
            }
        }
        for (burst, got) in zip(plan, answers) {
            #expect(got.map(\.status) == burst.map { _ in 200 })
            for (target, answer) in zip(burst, got) {
                let path = target.hasPrefix("/large/") ? target : Self.segment
                #expect(answer.body == origin.file(for: path), "\(target)")
                #expect(answer.headers["x-cache"] == (target.hasPrefix("/large/") ? "MISS" : "HIT"), "\(target)")
            }
        }
        await server.stop()
    }

    @Test("after a request with a body, the decoder reads the connection: later requests, pipelined too, are answered")
    func requestWithABodyHandsTheConnectionOver() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let (server, hit) = try await Self.serverWithCachedSegment(origin)
        let before = try await Self.eventLoopHits(server)
        let port = server.port
        let answers = try await offPool { () -> [RawConnection.Answer] in
            let connection = try RawConnection(port: port, timeout: 10)
            let post = "POST \(hit) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello"
            connection.send(post)
            let refused = try connection.readAnswer()
            connection.send(RawConnection.request("GET", hit))
            let got = try connection.readAnswer()
            connection.send(RawConnection.request("HEAD", hit) + RawConnection.request("GET", hit))
            return [refused, got, try connection.readAnswer(isHead: true), try connection.readAnswer()]
        }
        #expect(answers[0].status == 405)
        #expect(answers[1].status == 200)
        #expect(answers[1].body == origin.file(for: Self.segment))
        #expect(answers[2].status == 200)
        #expect(answers[2].headers["content-length"] == answers[1].headers["content-length"])
        #expect(answers[3].body == answers[1].body)
        // The hits were read by the decoder and answered by the front, as every request is.
        #expect(try await Self.eventLoopHits(server) == before + 3)
        #expect(try await server.metric("hlscache_responder_connections_total") == 1)
        await server.stop()
    }

    @Test("pipelined answers: the idle clock waits for the last one on the wire, not the first")
    func idleClockWaitsForTheLastPipelinedAnswer() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: [
            "--allow-host", "127.0.0.1", "--read-ahead", "0", "--idle-timeout", "1",
        ])
        let small = "/o/http/127.0.0.1:\(origin.port)\(Self.segment)"
        let large = "/o/http/127.0.0.1:\(origin.port)\(HitPathTests.largePath)"
        _ = try await TestHTTP.get(server.url(small))
        _ = try await TestHTTP.get(server.url(large))
        try await HitPathTests.waitForEntries(2, on: server)
        let port = server.port
        let answers = try await offPool { () -> [RawConnection.Answer] in
            let connection = try RawConnection(port: port, timeout: 10)
            connection.send(RawConnection.request("GET", small) + RawConnection.request("GET", large))
            let first = try connection.readAnswer()
            // The large answer cannot all be in the socket buffers: it is still being sent when the idle timeout
            // has passed since the first answer went out.
            Thread.sleep(forTimeInterval: 2)
            return [first, try connection.readAnswer()]
        }
        #expect(answers.map(\.status) == [200, 200])
        #expect(answers[0].body == origin.file(for: Self.segment))
        #expect(sameBytes(answers[1].body, StreamOrigin.pattern(count: 6_291_456)))
        await server.stop()
    }

    @Test("on a connection the decoder reads, a HEAD hit leaves the next answer its body")
    func headHitThenMissOnTheDecodersConnection() async throws {
        let (origin, server, hit) = try await HitPathTests.serverWithCachedObject(Self.segment)
        defer { origin.stop() }
        let miss = "/o/http/127.0.0.1:\(origin.port)/fmp4/seg2.m4s"
        let port = server.port
        let answers = try await offPool { () -> [RawConnection.Answer] in
            let connection = try RawConnection(port: port, timeout: 10)
            // `Proxy-Connection` hands the connection to the decoder: the front answers the HEAD (no body) and the GET
            // it reads.
            connection.send(RawConnection.request("HEAD", hit, extra: ["Proxy-Connection: keep-alive"]))
            let head = try connection.readAnswer(isHead: true)
            connection.send(RawConnection.request("GET", miss))
            return [head, try connection.readAnswer()]
        }
        #expect(answers[0].status == 200 && answers[0].headers["x-cache"] == "HIT" && answers[0].body.isEmpty)
        #expect(answers[1].status == 200 && answers[1].headers["x-cache"] == "MISS")
        #expect(answers[1].body == origin.file(for: "/fmp4/seg2.m4s"), "the miss was sent without its body")
        #expect(try await Self.eventLoopHits(server) == 1)
        await server.stop()
    }

    @Test("a closing answer written while another waits behind it ends the connection; the server goes on")
    func closingAnswerWithAnotherBehindIt() async throws {
        let (origin, server, large) = try await HitPathTests.serverWithCachedObject(HitPathTests.largePath)
        defer { origin.stop() }
        let small = "/o/http/127.0.0.1:\(origin.port)\(Self.segment)"
        _ = try await TestHTTP.get(server.url(small))
        try await HitPathTests.waitForEntries(2, on: server)
        let port = server.port
        let received = try await offPool { () -> Int in
            let connection = try RawConnection(port: port, timeout: 10)
            // On the decoder's connection (`Proxy-Connection`), a large hit that closes the connection, with a hit
            // pipelined behind it: both are written, the second waits behind the first until the client reads.
            connection.send(
                RawConnection.request("GET", large, extra: ["Proxy-Connection: keep-alive", "Connection: close"])
                    + RawConnection.request("GET", small))
            Thread.sleep(forTimeInterval: 0.3)
            return try connection.read(upTo: 64 << 20).count
        }
        #expect(received > 6_291_456)
        let after = try await TestHTTP.get(server.url(small))
        #expect(after.status == 200 && after.header("x-cache") == "HIT", "the server did not go on")
        await server.stop()
    }

    /// `hlscache_responder_connections_total` and `hlscache_cache_entries`, read on a connection of its own (which
    /// counts itself: `/metrics` is the responder's). The test's HTTP client is not used: its pooled connections
    /// could be the ones counted.
    private static func responderConnections(
        _ server: any RunningServer
    ) async throws -> (count: Double, entries: Double) {
        let port = server.port
        let answer = try await offPool { () -> RawConnection.Answer in
            let connection = try RawConnection(port: port, timeout: 10)
            connection.send(RawConnection.request("GET", "/metrics", extra: ["Connection: close"]))
            return try connection.readAnswer()
        }
        let lines = String(decoding: answer.body, as: UTF8.self).split(separator: "\n")
        func value(_ name: String) -> Double {
            lines.first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        }
        return (value("hlscache_responder_connections_total"), value("hlscache_cache_entries"))
    }

    /// Sends each of `targets` in turn on one new connection, and reads each answer.
    private static func ask(_ targets: [String], port: Int) async throws -> [RawConnection.Answer] {
        try await offPool {
            let connection = try RawConnection(port: port, timeout: 10)
            var answers: [RawConnection.Answer] = []
            for target in targets {
                connection.send(RawConnection.request("GET", target))
                answers.append(try connection.readAnswer())
            }
            return answers
        }
    }

    @Test(
        "a connection the front answers whole never sets up Hummingbird's handling; one that needs the responder does")
    func responderIsSetUpOnlyWhenNeeded() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let port = server.port
        let cached = "/o/http/127.0.0.1:\(origin.port)\(Self.segment)"
        _ = try await Self.ask([cached], port: port)
        var before = try await Self.responderConnections(server)
        for _ in 0..<400 where before.entries < 1 {
            try await Task.sleep(for: .milliseconds(50))
            before = try await Self.responderConnections(server)
        }
        #expect(before.count == 0, "the front answers its own routes: /metrics needs no responder")
        // A player's connection: hits, a miss, hlscache's own routes, pipelined too.
        let miss = "/o/http/127.0.0.1:\(origin.port)/fmp4/seg2.m4s"
        let answers = try await Self.ask([cached, cached, miss, cached, "/healthz", "/metrics"], port: port)
        #expect(answers.map { $0.headers["x-cache"] ?? "" } == ["HIT", "HIT", "MISS", "HIT", "BYPASS", "BYPASS"])
        #expect(answers.map(\.status) == [200, 200, 200, 200, 200, 200])
        #expect(answers[2].body == origin.file(for: "/fmp4/seg2.m4s"))
        #expect(try await Self.responderConnections(server).count == 0)
        // A request the scanner does not read (a body) needs the responder: set up once for its connection.
        let purge = try await offPool { () -> [RawConnection.Answer] in
            let connection = try RawConnection(port: port, timeout: 10)
            connection.send("POST \(cached) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello")
            let first = try connection.readAnswer()
            connection.send(RawConnection.request("GET", "/healthz"))
            return [first, try connection.readAnswer()]
        }
        #expect(purge.map(\.status) == [405, 200])
        #expect(try await Self.responderConnections(server).count == 1)
        await server.stop()
    }
}
