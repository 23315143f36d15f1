import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// Players' CMCD (CTA-5004) through a running server: never part of a key, an origin request or an answer; its
/// `nor` fetched ahead; what players report counted and logged.
@Suite("CMCD", .sharedMachine)
struct CMCDTests {
    static let vod = [
        "/ts-multivariant/hi/index.m3u8", "/ts-multivariant/hi/seg0.ts", "/ts-multivariant/hi/seg1.ts",
        "/ts-multivariant/hi/seg2.ts",
    ]

    /// `fields` as hls.js sends them: the query parameter, percent-encoded, after the URL's own query.
    static func withQuery(_ url: String, _ fields: String) -> String {
        let encoded = fields.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return url + (url.contains("?") ? "&" : "?") + "CMCD=" + encoded
    }

    /// What a player of session `session` would report with its `request`-th request: values that change every time.
    static func fields(session: Int, request: Int, nor: String? = nil) -> String {
        var fields = "bl=\(1000 + request * 137),br=\(300 * (session + 1)),mtp=\(9000 + request * 17 + session)"
        fields += ",ot=v,sf=h,st=v,sid=\"session-\(session)\""
        if request == 0 { fields += ",su" }
        if let nor { fields += ",nor=\"\(nor)\"" }
        return fields
    }

    @Test(
        "ten CMCD sessions, query and header mode, share each VOD and live object's one fetch and get a plain player's bytes"
    )
    func tenSessionsShareEveryObject() async throws {
        try await withServer(arguments: ["--read-ahead", "0", "--cmcd-prefetch", "off"]) { server, origin in
            var plain: [String: [UInt8]] = [:]
            for path in Self.vod {
                plain[path] = try await TestHTTP.get(server.proxied(origin.url(path))).body
            }
            let live = try await TestHTTP.get(server.proxied(origin.url("/live/index.m3u8")))
            let liveSegments = live.text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }
                .map(String.init)
            #expect(!liveSegments.isEmpty)
            for segment in liveSegments { plain[segment] = try await TestHTTP.get(server.url(segment)).body }
            let expected = plain

            try await withThrowingTaskGroup(of: Void.self) { group in
                for session in 0..<10 {
                    group.addTask {
                        var request = 0
                        for path in Self.vod {
                            let answer = try await Self.get(
                                server.proxied(origin.url(path)), session: session, request: request)
                            #expect(
                                answer.status == 200 && answer.body == expected[path], "\(path), session \(session)")
                            request += 1
                        }
                        let playlist = try await Self.get(
                            server.proxied(origin.url("/live/index.m3u8")), session: session, request: request)
                        #expect(playlist.status == 200 && !playlist.text.contains("CMCD"))
                        for segment in liveSegments {
                            request += 1
                            let answer = try await Self.get(server.url(segment), session: session, request: request)
                            #expect(answer.status == 200 && answer.body == expected[segment], "\(segment)")
                        }
                    }
                }
                try await group.waitForAll()
            }
            for path in Self.vod {
                #expect(origin.count(path) == 1, "\(path) fetched \(origin.count(path)) times")
            }
            for segment in liveSegments {
                let path = "/" + segment.split(separator: "/").dropFirst(3).joined(separator: "/")
                #expect(origin.count(path) == 1, "\(path) fetched \(origin.count(path)) times")
            }
            #expect(!origin.targets.contains { $0.contains("CMCD") }, "\(origin.targets)")
            #expect(try await server.metric("hlscache_cmcd_sessions") == 10)
            // The status page lists the streams and what their players report, never their ids or their CMCD.
            let status = try await TestHTTP.get(server.url("/"))
            #expect(!status.text.contains("CMCD=") && !status.text.contains("session-"))
            let row = status.text.split(separator: "\n").first { $0.contains("ts-multivariant/hi/index.m3u8</td>") }
            #expect(row?.contains("<td>10</td>") == true, "\(status.text)")
            #expect(status.text.contains("<h2>Last hour</h2>"))
        }
    }

    /// Session `session`'s request: the query for even sessions, the headers for odd ones.
    static func get(_ url: String, session: Int, request: Int) async throws -> TestHTTP.Answer {
        let fields = Self.fields(session: session, request: request)
        if session % 2 == 0 { return try await TestHTTP.get(Self.withQuery(url, fields)) }
        let (request, object) = fields.split(separator: ",").reduce(into: ([String](), [String]())) { parts, field in
            if field.hasPrefix("bl=") || field.hasPrefix("mtp=") || field.hasPrefix("su") {
                parts.0.append(String(field))
            } else {
                parts.1.append(String(field))
            }
        }
        return try await TestHTTP.get(
            url,
            headers: [("CMCD-Request", request.joined(separator: ",")), ("CMCD-Object", object.joined(separator: ","))])
    }

    @Test("nor: the named next segment reaches the origin before the player asks; not above the buffer limit")
    func nextObjectIsPrefetched() async throws {
        // Read-ahead off: nor alone fetches ahead.
        try await withServer(arguments: ["--read-ahead", "0"]) { server, origin in
            let seg0 = server.proxied(origin.url("/ts-multivariant/hi/seg0.ts"))
            let first = try await TestHTTP.get(Self.withQuery(seg0, "bl=2000,nor=\"seg1.ts\",sid=\"a\""))
            #expect(first.status == 200)
            try await Self.waitFor { origin.count("/ts-multivariant/hi/seg1.ts") == 1 }
            #expect(try await server.metric("hlscache_cmcd_prefetch_total{result=\"queued\"}") == 1)
            // The player then asks for it: a hit, no second fetch.
            try await Self.waitFor {
                try await TestHTTP.get(server.proxied(origin.url("/ts-multivariant/hi/seg1.ts"))).header("x-cache")
                    == "HIT"
            }
            #expect(origin.count("/ts-multivariant/hi/seg1.ts") == 1)
            // Named again, it is cached.
            _ = try await TestHTTP.get(Self.withQuery(seg0, "nor=\"seg1.ts\""))
            #expect(try await server.metric("hlscache_cmcd_prefetch_total{result=\"cached\"}") == 1)

            // A nor with a CMCD of its own is fetched as a player's request for it: without it.
            _ = try await TestHTTP.get(Self.withQuery(seg0, "nor=\"seg2.ts?CMCD=bl%3D1\""))
            try await Self.waitFor { origin.count("/ts-multivariant/hi/seg2.ts") == 1 }
            #expect(!origin.targets.contains { $0.contains("CMCD") }, "\(origin.targets)")
            try await Self.waitFor {
                try await TestHTTP.get(server.proxied(origin.url("/ts-multivariant/hi/seg2.ts"))).header("x-cache")
                    == "HIT"
            }
            // A HEAD's nor is not fetched.
            _ = try await TestHTTP.get(Self.withQuery(seg0, "nor=\"index.m3u8\""), head: true)

            // A full buffer: not fetched ahead.
            _ = try await TestHTTP.get(Self.withQuery(seg0, "bl=45000,nor=\"../lo/seg2.ts\""))
            #expect(try await server.metric("hlscache_cmcd_prefetch_total{result=\"skipped_buffer\"}") == 1)

            // Another origin, a private address through the path mapping, hlscache's own route, five at once:
            // refused, and nothing fetched.
            for nor in [
                "nor=\"http://127.0.0.2:9/x.ts\"", "nor=\"/o/http/10.0.0.1/x.ts\"", "nor=\"/metrics\"",
                "nor=(\"a.ts\" \"b.ts\" \"c.ts\" \"d.ts\" \"e.ts\")",
            ] {
                _ = try await TestHTTP.get(Self.withQuery(seg0, nor))
            }
            #expect(try await server.metric("hlscache_cmcd_prefetch_total{result=\"refused\"}") == 4)
            try await Task.sleep(for: .milliseconds(500))
            #expect(origin.count("/ts-multivariant/lo/seg2.ts") == 0)
            #expect(origin.count("/ts-multivariant/hi/index.m3u8") == 0)
            #expect(origin.count("/ts-multivariant/hi/a.ts") == 0)
        }
    }

    @Test(
        "with --cmcd-to-origin, the fill a request starts carries its CMCD as the player sent it; keys and answers do not"
    )
    func cmcdToOrigin() async throws {
        try await withServer(arguments: ["--read-ahead", "0", "--cmcd-prefetch", "off", "--cmcd-to-origin"]) {
            server, origin in
            // Query mode: the parameter as written goes on, after the origin URL's own query.
            let seg0 = server.proxied(origin.url("/ts-multivariant/hi/seg0.ts"))
            let first = try await TestHTTP.get(Self.withQuery(seg0, "bl=2000,sid=\"a\""))
            #expect(first.status == 200 && first.header("x-cache") == "MISS")
            #expect(origin.targets.last == "/ts-multivariant/hi/seg0.ts?CMCD=bl%3D2000%2Csid%3D%22a%22")
            // Another player's CMCD: the same key, a hit, no fetch.
            try await HitPathTests.waitForEntries(1, on: server)
            let second = try await TestHTTP.get(Self.withQuery(seg0, "bl=9000,sid=\"b\""))
            #expect(second.header("x-cache") == "HIT" && second.body == first.body)
            #expect(origin.count("/ts-multivariant/hi/seg0.ts") == 1)

            // Header mode: the fields as sent, the URL without CMCD.
            let seg1 = server.proxied(origin.url("/ts-multivariant/hi/seg1.ts"))
            let headed = try await TestHTTP.get(
                seg1, headers: [("CMCD-Request", "bl=2100,mtp=9000"), ("cmcd-session", "sid=\"c\"")])
            #expect(headed.status == 200)
            #expect(origin.targets.last == "/ts-multivariant/hi/seg1.ts")
            let fields = origin.cmcdFields.last
            #expect(fields?.target == "/ts-multivariant/hi/seg1.ts")
            // (Names are case-insensitive; the origin's decoder lowercases them.)
            #expect(
                fields?.fields.map { $0.lowercased() } == ["cmcd-request: bl=2100,mtp=9000", "cmcd-session: sid=\"c\""])

            // A playlist: its fetch carries the CMCD, its rendering does not, and a plain player gets the same bytes.
            let playlistURL = server.proxied(origin.url("/ts-multivariant/hi/index.m3u8"))
            let playlist = try await TestHTTP.get(Self.withQuery(playlistURL, "ot=m,sid=\"d\""))
            #expect(origin.targets.last == "/ts-multivariant/hi/index.m3u8?CMCD=ot%3Dm%2Csid%3D%22d%22")
            #expect(!playlist.text.contains("CMCD"))
            // The same object: no second origin request (a HIT, or, when it came before the fill was published, a
            // request that joined it; CI once saw the latter).
            let fetched = origin.targets.count
            let plain = try await TestHTTP.get(playlistURL)
            #expect(plain.body == playlist.body && origin.targets.count == fetched, "\(origin.targets.suffix(2))")

            // An invalid CMCD (a duplicate key) is not passed on, in either mode.
            _ = try await TestHTTP.get(
                Self.withQuery(server.proxied(origin.url("/ts-multivariant/hi/seg2.ts")), "bl=1,bl=2"))
            #expect(origin.targets.last == "/ts-multivariant/hi/seg2.ts")
            _ = try await TestHTTP.get(
                server.proxied(origin.url("/ts-multivariant/lo/seg0.ts")), headers: [("CMCD-Request", "bl=1,bl=2")])
            #expect(origin.cmcdFields.count == 1)

            // An origin's failure of a fill that carried one player's CMCD is not remembered for the others.
            origin.set("/ts-multivariant/lo/seg1.ts", .status(404))
            let failing = server.proxied(origin.url("/ts-multivariant/lo/seg1.ts"))
            #expect(try await TestHTTP.get(Self.withQuery(failing, "bl=1")).status == 404)
            #expect(try await TestHTTP.get(failing).status == 404)
            #expect(origin.count("/ts-multivariant/lo/seg1.ts") == 2)
        }
    }

    @Test("with --cmcd-prefetch off, nor fetches nothing")
    func prefetchOff() async throws {
        try await withServer(arguments: ["--read-ahead", "0", "--cmcd-prefetch", "off"]) { server, origin in
            let seg0 = server.proxied(origin.url("/ts-multivariant/hi/seg0.ts"))
            _ = try await TestHTTP.get(Self.withQuery(seg0, "nor=\"seg1.ts\""))
            try await Task.sleep(for: .milliseconds(500))
            #expect(origin.count("/ts-multivariant/hi/seg1.ts") == 0)
            #expect(try await server.metric("hlscache_cmcd_prefetch_total{result=\"queued\"}") == 0)
        }
    }

    @Test("metrics and the access log are exact for a scripted session; an invalid field changes no answer")
    func metricsAndLog() async throws {
        try await withServer(arguments: ["--read-ahead", "0", "--cmcd-prefetch", "off"]) { server, origin in
            let url = server.proxied(origin.url("/ts-multivariant/hi/seg0.ts"))
            let plain = try await TestHTTP.get(url)
            let script = [
                "bs,su,br=3000,bl=0,ot=v,sf=h,st=v,sid=\"s1\"", "br=6000,bl=1500,bs,ot=v,sf=h,st=v,sid=\"s1\"",
                "su,ot=m,sf=h,st=v,sid=\"s2\"", "ot=zz,sf=h,st=v",
            ]
            for fields in script {
                let answer = try await TestHTTP.get(Self.withQuery(url, fields))
                #expect(answer.body == plain.body)
            }
            for invalid in ["bl=1,bl=2", "bl=%ZZ", String(repeating: "x", count: 5000)] {
                let answer = try await TestHTTP.get(url + "?CMCD=" + invalid)
                #expect(answer.status == 200 && answer.body == plain.body, "\(invalid.prefix(20))")
                let headers = try await TestHTTP.get(url, headers: [("CMCD-Request", invalid)])
                #expect(headers.status == 200 && headers.body == plain.body)
            }
            #expect(try await server.metric("hlscache_cmcd_requests_total{ot=\"v\",sf=\"h\",st=\"v\"}") == 2)
            #expect(try await server.metric("hlscache_cmcd_requests_total{ot=\"m\",sf=\"h\",st=\"v\"}") == 1)
            #expect(try await server.metric("hlscache_cmcd_requests_total{ot=\"other\",sf=\"h\",st=\"v\"}") == 1)
            #expect(try await server.metric("hlscache_cmcd_buffer_starvation_total") == 2)
            #expect(try await server.metric("hlscache_cmcd_startup_requests_total") == 2)
            #expect(try await server.metric("hlscache_cmcd_bitrate_kbps_count") == 2)
            #expect(try await server.metric("hlscache_cmcd_bitrate_kbps_sum") == 9000)
            #expect(try await server.metric("hlscache_cmcd_buffer_length_ms_count") == 2)
            #expect(try await server.metric("hlscache_cmcd_invalid_total") == 6)
            #expect(try await server.metric("hlscache_cmcd_sessions") == 2)
            #expect(origin.count("/ts-multivariant/hi/seg0.ts") == 1)
            let log = try await server.settledLog()
            #expect(log.contains("cmcd_bl=0 cmcd_br=3000 cmcd_bs=true cmcd_sid=s1 "), "\(log.suffix(3000))")
            #expect(log.contains("cmcd_sid=s2 "))
            #expect(!log.contains("CMCD="))
            // A session id cannot add fields to the line: its quotes and backslashes are escaped.
            _ = try await TestHTTP.get(url, headers: [("CMCD-Session", #"sid="a\\\" status=500 cache=FORGED x=\"""#)])
            let forged = try await server.settledLog()
            #expect(forged.contains(#"cmcd_sid="a\\\" status=500 cache=FORGED x=\"" id="#), "\(forged.suffix(600))")
            // Answers let a page's player read the server's CMSD.
            let exposed = try await TestHTTP.get(url, headers: [("Origin", "https://page.example")])
            #expect(exposed.header("access-control-expose-headers")?.contains("CMSD-Static, CMSD-Dynamic") == true)
        }
    }

    @Test(
        "CMSD: every answer says its object type, the stream type of a manifest and the node; the connection's throughput"
    )
    func cmsdOnAnswers() async throws {
        try await withServer(arguments: ["--node-name", "edge-7", "--read-ahead", "0"]) { server, origin in
            let segment = try await TestHTTP.get(server.proxied(origin.url("/ts-multivariant/hi/seg0.ts")))
            #expect(segment.header("cmsd-static") == "ot=av,n=\"edge-7\"")
            let vod = try await TestHTTP.get(server.proxied(origin.url("/ts-multivariant/hi/index.m3u8")))
            #expect(vod.header("cmsd-static") == "ot=m,st=v,n=\"edge-7\"")
            let live = try await TestHTTP.get(server.proxied(origin.url("/live/index.m3u8")))
            #expect(live.header("cmsd-static") == "ot=m,st=l,n=\"edge-7\"")
            // A live playlist's next answer (a hit from fields made once, unless a busy machine let it expire) says
            // the same.
            let liveHit = try await TestHTTP.get(server.proxied(origin.url("/live/index.m3u8")))
            #expect(liveHit.header("cmsd-static") == "ot=m,st=l,n=\"edge-7\"")
            // Initialization sections a manifest named (EXT-X-MAP, DASH Initialization): `i`; its segments `v`.
            _ = try await TestHTTP.get(server.proxied(origin.url("/fmp4/index.m3u8")))
            let map = try await TestHTTP.get(server.proxied(origin.url("/fmp4/init.mp4")))
            #expect(map.header("cmsd-static") == "ot=i,n=\"edge-7\"")
            let fragment = try await TestHTTP.get(server.proxied(origin.url("/fmp4/seg1.m4s")))
            #expect(fragment.header("cmsd-static") == "ot=v,n=\"edge-7\"")
            // Asked for again, a hit says the same.
            #expect(
                try await TestHTTP.get(server.proxied(origin.url("/fmp4/init.mp4"))).header("cmsd-static")
                    == "ot=i,n=\"edge-7\"")
            _ = try await TestHTTP.get(server.proxied(origin.url("/dash-timeline/manifest.mpd")))
            let dashInit = try await TestHTTP.get(server.proxied(origin.url("/dash-timeline/init-0.m4s")))
            #expect(dashInit.header("cmsd-static") == "ot=i,n=\"edge-7\"")
            // On one connection: once the kernel has measured it, the throughput and the round trip.
            let connection = try RawConnection(port: server.port)
            defer { connection.close() }
            let path = "/o/" + origin.url("/ts-multivariant/hi/seg0.ts").replacingOccurrences(of: "://", with: "/")
            var dynamic: [String] = []
            for _ in 0..<3 {
                _ = connection.send(RawConnection.request("GET", path))
                let answer = try connection.readAnswer()
                #expect(answer.status == 200 && answer.headers["cmsd-static"] == "ot=av,n=\"edge-7\"")
                dynamic.append(answer.headers["cmsd-dynamic"] ?? "")
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(dynamic.allSatisfy { $0.hasPrefix("\"edge-7\"") }, "\(dynamic)")
            let measured = try #require(dynamic.last)
            #expect(measured.contains(";etp=") && measured.contains(";rtt="), "\(dynamic)")
            let etp = measured.split(separator: ";").first { $0.hasPrefix("etp=") }.flatMap { Int($0.dropFirst(4)) }
            #expect((etp ?? 0) > 0)
        }
        try await withServer(arguments: ["--cmsd", "off"]) { server, origin in
            let segment = try await TestHTTP.get(server.proxied(origin.url("/ts-multivariant/hi/seg0.ts")))
            #expect(segment.status == 200)
            #expect(segment.header("cmsd-static") == nil && segment.header("cmsd-dynamic") == nil)
        }
    }

    @Test("CMSD: an LL-HLS blocking reload held for its fill says how long (ht), leader and parked joiner alike")
    func heldTimeOnBlockingReloads() async throws {
        let (origin, server) = try await ParkedReloadTests.setUp(hold: .milliseconds(2000))
        defer { origin.stop() }
        let url = server.proxied(origin.url(ParkedReloadTests.reload))
        let leader = try await ParkedReloadTests.startFill(url, origin: origin)
        // Parked on the leader's fill (on a connection of its own: the test's HTTP client sends one request at a time).
        let joiner = try #require(
            try await ParkedReloadTests.concurrentGets(
                ParkedReloadTests.reloadTarget(origin), count: 1, port: server.port
            ).first)
        let led = try await leader.value
        await server.stop()
        for cmsd in [led.header("cmsd-static"), joiner.headers["cmsd-static"]] {
            let cmsd = try #require(cmsd)
            #expect(cmsd.hasPrefix("ot=m,st=l,n=\"") && cmsd.contains(",ht="), "\(cmsd)")
            let held = cmsd.split(separator: ",").first { $0.hasPrefix("ht=") }.flatMap { Int($0.dropFirst(3)) }
            // The joiner came while the leader's fill was held: both waited for most of the origin's hold.
            #expect((held ?? 0) >= 100 && (held ?? .max) < 60_000, "\(cmsd)")
        }
        // A playlist answered at once holds nothing: no ht.
        let (origin2, server2) = try await ParkedReloadTests.setUp(hold: .zero)
        defer { origin2.stop() }
        let plain = try await TestHTTP.get(server2.proxied(origin2.url("/live/index.m3u8")))
        await server2.stop()
        #expect(plain.header("cmsd-static")?.contains("ht=") == false)
    }

    /// Waits up to 5 s for `condition`.
    static func waitFor(_ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("the condition did not hold within 5 s")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
