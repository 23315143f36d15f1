import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// LL-HLS blocking playlist reloads that find a fill of their URL in flight wait on the event loop, not in the
/// responder, and are answered as hits when it ends; whatever else happens, they are answered as any request is.
@Suite("Parked blocking reloads", .sharedMachine)
struct ParkedReloadTests {
    static let reload = "/live/index.m3u8?_HLS_msn=3&_HLS_part=0"

    /// An origin holding the blocking reload for `hold`, then answering it (or `status`), and a server in front.
    static func setUp(hold: Duration, status: Int? = nil) async throws -> (StreamOrigin, any RunningServer) {
        let origin = StreamOrigin()
        try await origin.start()
        origin.set("/live/index.m3u8", status.map { .delayedStatus(hold, $0) } ?? .delay(hold))
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        return (origin, server)
    }

    /// The blocking reload's request target on a server in front of `origin`.
    static func reloadTarget(_ origin: StreamOrigin) -> String {
        "/o/http/127.0.0.1:\(origin.port)\(reload)"
    }

    /// Starts the request that begins the fill, and waits until the origin holds it.
    static func startFill(_ url: String, origin: StreamOrigin) async throws -> Task<TestHTTP.Answer, any Error> {
        let first = Task { try await TestHTTP.get(url) }
        #expect(try await eventually { origin.targets.contains { $0.contains("_HLS_msn=3&_HLS_part=0") } })
        return first
    }

    /// `count` GETs of `target` on connections of their own, all sent before any answer is read; with `halfClose`,
    /// each client shuts its sending side after its request, as some HTTP clients do.
    static func concurrentGets(
        _ target: String, count: Int, port: Int, halfClose: Bool = false
    ) async throws -> [RawConnection.Answer] {
        try await offPool {
            let connections = try (0..<count).map { _ in try RawConnection(port: port) }
            for connection in connections {
                connection.send(RawConnection.request("GET", target))
                if halfClose { connection.finishSending() }
            }
            return try connections.map { try $0.readAnswer() }
        }
    }

    /// A server in front of an origin holding the blocking reload for `hold`, with a segment cached and the reload's
    /// fill started; `send` sends the reload and the segment's request on one connection, as the test likes; their
    /// two answers must be the leader's playlist and the segment, in that order. Returns the server, to be stopped.
    static func reloadThenSegment(
        hold: Duration, send: @escaping @Sendable (RawConnection, _ reload: String, _ segment: String) -> Void
    ) async throws -> any RunningServer {
        let (origin, server) = try await Self.setUp(hold: hold)
        defer { origin.stop() }
        let segment = "/o/http/127.0.0.1:\(origin.port)/fmp4/seg1.m4s"
        _ = try await TestHTTP.get(server.url(segment))
        try await HitPathTests.waitForEntries(1, on: server)
        let first = try await Self.startFill(server.proxied(origin.url(Self.reload)), origin: origin)
        let target = Self.reloadTarget(origin)
        let port = server.port
        let answers = try await offPool { () -> [RawConnection.Answer] in
            let connection = try RawConnection(port: port)
            send(connection, target, segment)
            return try [connection.readAnswer(), connection.readAnswer()]
        }
        let leader = try await first.value
        #expect(answers.map(\.status) == [200, 200])
        #expect(answers[0].body == leader.body)
        #expect(answers[1].body == origin.file(for: "/fmp4/seg1.m4s"))
        return server
    }

    /// The hits the event loop has answered from memory (rendered playlists among them).
    static func loopMemoryHits(_ server: any RunningServer) async throws -> Double {
        try await server.metric(#"hlscache_event_loop_hits_total{body="memory"}"#)
    }

    /// The cache's hits, from the status page ("(N hits, …").
    static func cacheHits(_ server: any RunningServer) async throws -> Int {
        let page = try await TestHTTP.get(server.url("/")).text
        guard let end = page.range(of: " hits, ") else { return -1 }
        return Int(page[..<end.lowerBound].split(separator: "(").last ?? "") ?? -1
    }

    @Test("requests joining a blocking reload in flight wait on the event loop and get the same playlist as hits")
    func joinersAreParkedAndAnsweredAsHits() async throws {
        let (origin, server) = try await Self.setUp(hold: .milliseconds(1500))
        defer { origin.stop() }
        let url = server.proxied(origin.url(Self.reload))
        // Read before the fill starts: the test's HTTP client sends one request at a time to a host.
        let hitsBefore = try await Self.loopMemoryHits(server)
        let frontHitsBefore = try await server.metric("hlscache_front_hits_total")
        let cacheHitsBefore = try await Self.cacheHits(server)
        let first = try await Self.startFill(url, origin: origin)
        let target = Self.reloadTarget(origin)
        let joiners = try await Self.concurrentGets(target, count: 20, port: server.port)
        let leader = try await first.value
        #expect(leader.status == 200 && leader.header("x-cache") == "MISS")
        #expect(joiners.allSatisfy { $0.status == 200 && $0.body == leader.body })
        #expect(joiners.allSatisfy { $0.headers["x-cache"] == "HIT" })
        let parked = try await server.metric("hlscache_parked_requests_total")
        #expect(parked == 20)
        // The leader's fill was started by the event loop, before its request went to the responder.
        #expect(try await server.metric("hlscache_event_loop_fill_starts_total") == 1)
        // Answered by the event loop, not handed to the responder after the fill.
        let memoryHits = try await Self.loopMemoryHits(server) - hitsBefore
        let renders = try await server.metric("hlscache_playlist_renders_total")
        #expect(memoryHits == 20, "renders \(renders)")
        // Parked before the HTTP/1 decoder and answered as bytes: no decoding, no encoder, no responder.
        #expect(try await server.metric("hlscache_front_hits_total") - frontHitsBefore == 20)
        // Each counted by the cache, though the playlist is looked up once per batch of wake-ups.
        #expect(try await Self.cacheHits(server) - cacheHitsBefore == 20)
        #expect(origin.targets.filter { $0.contains("_HLS_msn=3&_HLS_part=0") }.count == 1)
        await server.stop()
    }

    @Test("when the blocking reload fails, the parked requests get the failure's answer at once, not a hang")
    func failedFillIsAnsweredByTheResponder() async throws {
        let (origin, server) = try await Self.setUp(hold: .milliseconds(1000), status: 503)
        defer { origin.stop() }
        let url = server.proxied(origin.url(Self.reload))
        let first = try await Self.startFill(url, origin: origin)
        let started = ContinuousClock.now
        let target = Self.reloadTarget(origin)
        let joiners = try await Self.concurrentGets(target, count: 5, port: server.port).map(\.status)
        #expect(try await first.value.status >= 500)
        #expect(joiners.allSatisfy { $0 >= 500 }, "\(joiners)")
        // Held 1 s by the origin, asked again once by the responder for the parked ones: well under the 30 s a
        // player would wait if they were forgotten.
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(try await server.metric("hlscache_parked_requests_total") == 5)
        #expect((try? await TestHTTP.get(server.url("/healthz")).status) == 200)
        await server.stop()
    }

    @Test("a parked request whose client half-closed, and one whose client left, leave the others answered")
    func halfClosedAndGoneClients() async throws {
        // Held 3 s: the four clients must all be parked before the origin answers, on a loaded machine too.
        let (origin, server) = try await Self.setUp(hold: .milliseconds(3000))
        defer { origin.stop() }
        let first = try await Self.startFill(server.proxied(origin.url(Self.reload)), origin: origin)
        let target = Self.reloadTarget(origin)
        let port = server.port
        // One client sends and leaves at once (reset), while parked.
        try await offPool {
            let gone = try RawConnection(port: port)
            gone.send(RawConnection.request("GET", target))
            Thread.sleep(forTimeInterval: 0.2)
            gone.reset()
        }
        let halfClosed = try await Self.concurrentGets(target, count: 3, port: port, halfClose: true)
        let leader = try await first.value
        #expect(halfClosed.map(\.status) == [200, 200, 200])
        #expect(halfClosed.allSatisfy { $0.body == leader.body })
        #expect(try await server.metric("hlscache_parked_requests_total") == 4)
        #expect((try? await TestHTTP.get(server.url("/healthz")).status) == 200)
        await server.stop()
    }

    @Test("a blocking reload with a request pipelined behind it goes to the responder, and both are answered in order")
    func pipelinedBehindParkedKeepsOrder() async throws {
        let server = try await Self.reloadThenSegment(hold: .milliseconds(1200)) { connection, reload, segment in
            connection.send(RawConnection.request("GET", reload) + RawConnection.request("GET", segment))
        }
        // With a request behind it in the same read, it goes on to the responder (which joins the fill) at once, the
        // order kept by the decoder; were the read split between them, it is parked until the next one comes, once.
        #expect(try await server.metric("hlscache_parked_requests_total") <= 1)
        await server.stop()
    }

    @Test("bytes sent after a parked request that closes the connection go on with it: the parked one is answered")
    func bytesAfterAParkedClosingRequest() async throws {
        let (origin, server) = try await Self.setUp(hold: .milliseconds(1500))
        defer { origin.stop() }
        let first = try await Self.startFill(server.proxied(origin.url(Self.reload)), origin: origin)
        let target = Self.reloadTarget(origin)
        let port = server.port
        let answer = try await offPool { () -> RawConnection.Answer in
            let connection = try RawConnection(port: port)
            connection.send(RawConnection.request("GET", target, extra: ["Connection: close"]))
            // Parked by now; then a request comes behind it anyway, in two reads.
            Thread.sleep(forTimeInterval: 0.3)
            let next = RawConnection.request("GET", "/healthz")
            connection.send(String(next.prefix(20)))
            Thread.sleep(forTimeInterval: 0.1)
            connection.send(String(next.dropFirst(20)))
            return try connection.readAnswer()
        }
        let leader = try await first.value
        #expect(answer.status == 200)
        #expect(answer.body == leader.body)
        await server.stop()
    }

    @Test("a request sent after a parked one, on its connection, sends the parked one on first: both answered in order")
    func laterRequestBehindParkedKeepsOrder() async throws {
        let server = try await Self.reloadThenSegment(hold: .milliseconds(1500)) { connection, reload, segment in
            connection.send(RawConnection.request("GET", reload))
            // Parked by now, alone on its connection; then the next request comes.
            Thread.sleep(forTimeInterval: 0.3)
            connection.send(RawConnection.request("GET", segment))
        }
        // Parked once (by the front), then handed on as it came, not parked a second time behind the decoder.
        #expect(try await server.metric("hlscache_parked_requests_total") == 1)
        await server.stop()
    }
}
