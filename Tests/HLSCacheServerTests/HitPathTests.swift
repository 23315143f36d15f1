import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// Hits answered on the event loop: `sendfile` for entry files, shared buffers for the memory tier and rewritten
/// playlists; the same answers as the async responder, in request order, and safe when clients misbehave.
@Suite("Event-loop hit path", .sharedMachine)
struct HitPathTests {
    /// A 6 MiB object: larger than the memory tier admits (64 KiB), so its hits are sent from the entry file.
    static let largePath = "/large/6291456.ts"

    @Test(
        "a hit read by the decoder gets the bytes and headers of one the front reads, for GET, HEAD and ranges")
    func sendfileMatchesResponder() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let fast = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let slow = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let expected = StreamOrigin.pattern(count: 6_291_456)
        let requests: [(headers: [(name: String, value: String)], head: Bool)] = [
            ([], false), ([], true), ([("Range", "bytes=100-199")], false), ([("Range", "bytes=4000000-")], false),
            ([("Range", "bytes=-5000")], false),
        ]
        var answers: [[TestHTTP.Answer]] = []
        for (server, viaDecoder) in [(fast, false), (slow, true)] {
            // `Proxy-Connection` is the decoder's to read: the slow server's requests go to its responder.
            let decoders = viaDecoder ? [(name: "Proxy-Connection", value: "keep-alive")] : []
            let url = server.proxied(origin.url(Self.largePath))
            let miss = try await TestHTTP.get(url, headers: decoders)
            #expect(miss.header("x-cache") == "MISS")
            #expect(sameBytes(miss.body, expected))
            // Published once synced, after its answer ended.
            try await Self.waitForEntries(1, on: server)
            var hits: [TestHTTP.Answer] = []
            for request in requests {
                let answer = try await TestHTTP.get(url, headers: request.headers + decoders, head: request.head)
                #expect(answer.header("x-cache") == "HIT")
                hits.append(answer)
            }
            answers.append(hits)
        }
        #expect(sameBytes(answers[0][0].body, expected))
        #expect(answers[0][2].body == Array(expected[100...199]))
        #expect(sameBytes(answers[0][3].body, expected[4_000_000...]))
        #expect(answers[0][4].body == Array(expected[(expected.count - 5000)...]))
        for (fastAnswer, slowAnswer) in zip(answers[0], answers[1]) {
            #expect(fastAnswer.status == slowAnswer.status)
            #expect(sameBytes(fastAnswer.body, slowAnswer.body))
            #expect(Self.comparable(fastAnswer.headers) == Self.comparable(slowAnswer.headers))
        }
        let fastMetrics = try await TestHTTP.get(fast.url("/metrics")).text
        let slowMetrics = try await TestHTTP.get(slow.url("/metrics")).text
        // The whole object and the two open ranges from the file; the 100-byte range is small enough for memory.
        #expect(fastMetrics.contains(#"hlscache_event_loop_hits_total{body="sendfile"} 3"#), "\(fastMetrics)")
        #expect(fastMetrics.contains(#"hlscache_event_loop_hits_total{body="memory"} 1"#))
        #expect(fastMetrics.contains(#"hlscache_event_loop_hits_total{body="none"} 1"#))
        // The decoder only read the slow server's requests: the front answered them, as it answers its own.
        #expect(slowMetrics.contains(#"hlscache_event_loop_hits_total{body="sendfile"} 3"#), "\(slowMetrics)")
        #expect(slowMetrics.contains(#"hlscache_event_loop_hits_total{body="memory"} 1"#))
        #expect(fastMetrics.contains("hlscache_responder_connections_total 0\n"))
        #expect(!slowMetrics.contains("hlscache_responder_connections_total 0\n"))
        #expect(slowMetrics.contains(#"hlscache_requests_total{kind="segment",cache="hit",protocol="http/1.1"} 5"#))
        #expect(fastMetrics.contains(#"hlscache_requests_total{kind="segment",cache="hit",protocol="http/1.1"} 5"#))
        await fast.stop()
        await slow.stop()
    }

    @Test("a playlist hit is sent from its rewritten copy in memory, with the same bytes as the first answer")
    func playlistHitFromMemory() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let url = server.proxied(origin.url("/fmp4/index.m3u8"))
        let first = try await TestHTTP.get(url)
        // The fill is published just after its answer ends; before that the responder answers (HIT or MISS).
        try await Self.waitForEntries(1, on: server)
        let second = try await TestHTTP.get(url)
        #expect(first.header("x-cache") == "MISS")
        #expect(second.header("x-cache") == "HIT")
        #expect(second.body == first.body)
        #expect(second.text.contains("/o/http/127.0.0.1:\(origin.port)/fmp4/seg0.m4s"))
        #expect(second.header("content-type") == first.header("content-type"))
        #expect(second.header("cache-control")?.hasPrefix("public, max-age=") == true)
        let metrics = try await TestHTTP.get(server.url("/metrics")).text
        #expect(metrics.contains(#"hlscache_event_loop_hits_total{body="memory"} 1"#), "\(metrics)")
        #expect(origin.count("/fmp4/index.m3u8") == 1)
        await server.stop()
    }

    @Test("a hit of up to 64 KiB is sent from memory, a larger one from its entry file, both with the origin's bytes")
    func memoryTierStopsWhereSendfileIsCheaper() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let sizes = [65_536, 65_537, 2_097_152]
        for size in sizes {
            _ = try await TestHTTP.get(server.proxied(origin.url("/large/\(size).ts")))
        }
        try await Self.waitForEntries(sizes.count, on: server)
        var bodies: [String] = []
        for size in sizes {
            let (memory, file) = (
                try await server.metric(#"hlscache_event_loop_hits_total{body="memory"}"#),
                try await server.metric(#"hlscache_event_loop_hits_total{body="sendfile"}"#)
            )
            let hit = try await TestHTTP.get(server.proxied(origin.url("/large/\(size).ts")))
            #expect(hit.header("x-cache") == "HIT")
            #expect(sameBytes(hit.body, StreamOrigin.pattern(count: size)), "\(size)")
            if try await server.metric(#"hlscache_event_loop_hits_total{body="memory"}"#) == memory + 1 {
                bodies.append("memory")
            } else if try await server.metric(#"hlscache_event_loop_hits_total{body="sendfile"}"#) == file + 1 {
                bodies.append("sendfile")
            }
        }
        #expect(bodies == ["memory", "sendfile", "sendfile"])
        await server.stop()
    }

    @Test("file hits leave whole at once, one by one and pipelined: the cork around each head is lifted at the flush")
    func fileHitsAreNotHeldByTheCork() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        // A process of its own: it times answers in milliseconds, which other tests' servers on the test process's
        // event loops would hold up.
        let server = try await ServerProcess.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        // Not a multiple of any segment size: a cork left on would hold the last segment for the kernel's 200 ms.
        let size = 100_001
        let path = "/o/http/127.0.0.1:\(origin.port)/large/\(size).ts"
        _ = try await TestHTTP.get(server.url(path))
        try await Self.waitForEntries(1, on: server)
        let sentFromFile = try await server.metric(#"hlscache_event_loop_hits_total{body="sendfile"}"#)
        let connection = try RawConnection(port: server.port)
        let expected = StreamOrigin.pattern(count: size)
        var durations: [Duration] = []
        for _ in 0..<5 {
            let start = ContinuousClock.now
            connection.send(RawConnection.request("GET", path))
            let answer = try connection.readAnswer()
            durations.append(.now - start)
            #expect(answer.headers["x-cache"] == "HIT" && answer.body == expected)
        }
        let start = ContinuousClock.now
        connection.send(RawConnection.request("GET", path) + RawConnection.request("GET", path))
        let pair = [try connection.readAnswer(), try connection.readAnswer()]
        let pipelined = ContinuousClock.now - start
        #expect(pair.allSatisfy { $0.headers["x-cache"] == "HIT" && $0.body == expected })
        #expect(try await server.metric(#"hlscache_event_loop_hits_total{body="sendfile"}"#) == sentFromFile + 7)
        // Each takes about a millisecond; held by a cork, every one would take 200 ms or more.
        #expect(durations.sorted()[2] < .milliseconds(100), "\(durations)")
        #expect(pipelined < .milliseconds(190), "\(pipelined)")
        await server.stop()
    }

    @Test("a miss's fill is started by the event loop and led by the responder's fetch: one miss, nothing deduplicated")
    func missFillStartedOnTheEventLoop() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let first = try await TestHTTP.get(server.proxied(origin.url("/fmp4/seg0.m4s")))
        #expect(first.status == 200 && first.header("x-cache") == "MISS")
        #expect(try await server.metric("hlscache_event_loop_fill_starts_total") == 1)
        #expect(try await server.metric("hlscache_fills_deduplicated_total") == 0)
        #expect(origin.count("/fmp4/seg0.m4s") == 1)
        #expect(try await TestHTTP.get(origin.url("/fmp4/seg0.m4s")).body == first.body)
        await server.stop()
    }

    @Test("pipelined requests are answered in order when a miss sits between hits")
    func pipelinedOrder() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        origin.set("/live-source/seg5.ts", .delay(.milliseconds(400)))
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let large = "/o/http/127.0.0.1:\(origin.port)\(Self.largePath)"
        let small = "/o/http/127.0.0.1:\(origin.port)/fmp4/seg1.m4s"
        let slowMiss = "/o/http/127.0.0.1:\(origin.port)/live-source/seg5.ts"
        _ = try await TestHTTP.get(server.url(large))
        _ = try await TestHTTP.get(server.url(small))
        try await Self.waitForEntries(2, on: server)
        let port = server.port
        let answers = try await offPool { () -> [RawConnection.Answer] in
            let connection = try RawConnection(port: port)
            var text = ""
            for (method, path) in [("GET", large), ("GET", slowMiss), ("GET", small), ("HEAD", large), ("GET", large)] {
                text += RawConnection.request(method, path)
            }
            connection.send(text)
            return try [false, false, false, true, false].map { try connection.readAnswer(isHead: $0) }
        }
        #expect(answers.map(\.status) == [200, 200, 200, 200, 200])
        #expect(answers.map { $0.headers["x-cache"] ?? "" } == ["HIT", "MISS", "HIT", "HIT", "HIT"])
        #expect(sameBytes(answers[0].body, StreamOrigin.pattern(count: 6_291_456)))
        #expect(answers[1].body == origin.file(for: "/live-source/seg5.ts"))
        #expect(answers[2].body == origin.file(for: "/fmp4/seg1.m4s"))
        #expect(answers[3].headers["content-length"] == "6291456")
        #expect(sameBytes(answers[4].body, answers[0].body))
        // All are the front's: the hits behind the miss wait for its end, so that answers leave in order.
        #expect(try await server.metric(#"hlscache_event_loop_hits_total{body="sendfile"}"#) == 2)
        #expect(try await server.metric(#"hlscache_event_loop_hits_total{body="none"}"#) == 1)
        // The two that filled the cache first, and the pipelined one.
        #expect(try await server.metric("hlscache_front_misses_total") == 3)
        #expect(try await server.metric("hlscache_responder_connections_total") == 0)
        await server.stop()
    }

    @Test("a keep-alive connection carries several hits, and Connection: close ends it after the body")
    func keepAliveAndClose() async throws {
        let (origin, server, large) = try await Self.serverWithCachedObject(Self.largePath)
        defer { origin.stop() }
        let port = server.port
        let (answers, closed) = try await offPool { () -> ([RawConnection.Answer], Bool) in
            let connection = try RawConnection(port: port, timeout: 10)
            var answers: [RawConnection.Answer] = []
            for _ in 0..<3 {
                connection.send(RawConnection.request("GET", large))
                answers.append(try connection.readAnswer())
            }
            connection.send(RawConnection.request("GET", large, extra: ["Connection: close"]))
            answers.append(try connection.readAnswer())
            return (answers, connection.serverCloses())
        }
        let expected = StreamOrigin.pattern(count: 6_291_456)
        #expect(
            answers.allSatisfy { $0.status == 200 && sameBytes($0.body, expected) && $0.headers["x-cache"] == "HIT" })
        #expect(answers.last?.headers["connection"] == "close")
        #expect(closed, "the server kept the connection open after Connection: close")
        #expect(try await server.metric(#"hlscache_event_loop_hits_total{body="sendfile"}"#) == 4)
        await server.stop()
    }

    @Test("a player that resets the connection mid-sendfile is logged as aborted and the server goes on serving")
    func clientResetMidBody() async throws {
        let (origin, server, proxied) = try await Self.serverWithCachedObject("/large/33554432.ts")
        defer { origin.stop() }
        let port = server.port
        let received = try await offPool { () -> Int in
            let connection = try RawConnection(port: port)
            connection.send(RawConnection.request("GET", proxied))
            let bytes = try connection.read(upTo: 256 * 1024)
            connection.close(reset: true)
            return bytes.count
        }
        #expect(received == 256 * 1024)
        var logged = false
        for _ in 0..<100 where !logged {
            try await Task.sleep(for: .milliseconds(100))
            logged = server.log.contains("response aborted")
        }
        #expect(logged, "no aborted-response log line: \(server.log.suffix(2000))")
        let again = try await TestHTTP.get(server.url(proxied))
        #expect(again.status == 200)
        #expect(again.body.count == 33_554_432)
        #expect(sameBytes(again.body, StreamOrigin.pattern(count: 33_554_432)))
        #expect(try await server.metric(#"hlscache_event_loop_hits_total{body="sendfile"}"#) == 2)
        await server.stop()
    }

    @Test("SIGTERM while a sendfile answer is being read: the reader still gets the whole body, then the server exits")
    func shutdownFinishesSendfile() async throws {
        let (origin, server, proxied) = try await Self.serverWithCachedObject("/large/33554432.ts", ownProcess: true)
        defer { origin.stop() }
        let port = server.port
        let process = try #require(server as? ServerProcess).process
        let body = try await offPool { () -> [UInt8] in
            let connection = try RawConnection(port: port)
            connection.send(RawConnection.request("GET", proxied))
            var bytes = try connection.read(upTo: 1 << 20)
            process.terminate()
            Thread.sleep(forTimeInterval: 0.5)
            bytes += try connection.read(upTo: 64 << 20)
            return bytes
        }
        let headEnd = try #require(body.firstRange(of: [13, 10, 13, 10]))
        #expect(String(decoding: body[..<headEnd.lowerBound], as: UTF8.self).contains("X-Cache: HIT"))
        #expect(sameBytes(StreamOrigin.pattern(count: 33_554_432), body[headEnd.upperBound...]))
        let exit = await server.stop()
        #expect(exit.status == 0)
    }

    /// A started origin and server, and the proxied target of `path`, fetched once so that it is cached.
    /// - Parameter ownProcess: whether the server runs in a process of its own (a test about the process).
    static func serverWithCachedObject(
        _ path: String, ownProcess: Bool = false
    ) async throws -> (origin: StreamOrigin, server: any RunningServer, target: String) {
        let origin = StreamOrigin()
        try await origin.start()
        let arguments = ["--allow-host", "127.0.0.1", "--read-ahead", "0"]
        let server: any RunningServer =
            ownProcess
            ? try await ServerProcess.start(arguments: arguments)
            : try await InProcessServer.start(arguments: arguments)
        let target = "/o/http/127.0.0.1:\(origin.port)\(path)"
        _ = try await TestHTTP.get(server.url(target))
        try await waitForEntries(1, on: server)
        return (origin, server, target)
    }

    /// Waits until the cache holds `count` published entries: a large fill is published (synced and renamed) a
    /// little after its last byte was sent.
    static func waitForEntries(_ count: Int, on server: any RunningServer) async throws {
        for _ in 0..<400 {
            // Counted, and renamed into place: an entry is counted just before its file has its name, and a request
            // in between joins the fill (a MISS), which a loaded machine once showed after this wait.
            if try await server.metric("hlscache_cache_entries") >= Double(count),
                publishedEntryFiles(in: server.cacheDirectory).count >= count
            {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("the cache did not publish \(count) entries within 20 s")
    }

    /// Headers that must match between the two paths: all but the per-response ones (`CMSD-Dynamic`, the
    /// connection's measure, only present), and the node's name in `CMSD-Static` (the two servers have their own).
    private static func comparable(_ headers: [(name: String, value: String)]) -> [String] {
        headers.filter { !["date", "x-request-id"].contains($0.name) }
            .map { field in
                switch field.name {
                case "cmsd-dynamic": "cmsd-dynamic"
                case "cmsd-static": "cmsd-static: " + String(field.value.prefix { $0 != "n" })
                default: "\(field.name): \(field.value)"
                }
            }
            .sorted()
    }
}
