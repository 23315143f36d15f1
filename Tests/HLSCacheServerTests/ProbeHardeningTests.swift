import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import HTTPTypes
import OriginCache
import SegmentCache
import Testing

/// The hardening probe of the last release, item by item (issue 40): each way it took the server down, made it leak
/// or made it work for a stranger is now an error answer, a refusal at start or a bound.
@Suite("Hardening probe", .serialized, .sharedMachine)
struct ProbeHardeningTests {
    static let loopback = ["--allow-host", "127.0.0.1", "--allow-private-networks"]

    @Test("item 1: MPDs whose numbers overflow get 502 with the reason and line, and the server lives")
    func overflowingMPDsAreAnswered() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: Self.loopback)
        let templates = [
            #"<SegmentTemplate media="s$Number$.m4s" duration="1" timescale="1" startNumber="9223372036854775807"/>"#,
            #"<SegmentTemplate media="s$Number$.m4s" startNumber="9223372036854775807"><SegmentTimeline>"#
                + #"<S t="0" d="1" r="3"/></SegmentTimeline></SegmentTemplate>"#,
            #"<SegmentTemplate media="s$Time$.m4s" timescale="100000000000000000"><SegmentTimeline>"#
                + #"<S t="0" d="1" r="-1"/></SegmentTimeline></SegmentTemplate>"#,
            #"<SegmentTemplate media="s$Number$.m4s" duration="4611686018427387904" timescale="9223372036854775807"/>"#,
        ]
        for (index, template) in templates.enumerated() {
            let mpd = """
                <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT100S">
                <Period duration="PT100S"><AdaptationSet>
                \(template)
                <Representation id="v" bandwidth="1"/></AdaptationSet></Period></MPD>
                """
            origin.set("/hostile\(index).mpd", .answer(mpd, headers: [.contentType: "application/dash+xml"]))
            for _ in 0..<2 {
                let answer = try await TestHTTP.get(server.proxied(origin.url("/hostile\(index).mpd")))
                #expect(answer.status == 502, "\(template): \(answer.text)")
                #expect(answer.text.hasPrefix("origin returned an invalid MPD: "), "\(answer.text)")
                #expect(answer.text.contains("(line 3)"), "\(answer.text)")
                #expect(server.isRunning, "\(template) killed the server")
            }
        }
        #expect(try await TestHTTP.get(server.url("/healthz")).status == 200)
        await server.stop()
    }

    @Test("item 6: reverse mode reaches only its origin's port; its own address and /o/ chains are loops")
    func reverseModeIsConfined() async throws {
        try await StreamOrigin.withRunning { origin in
            let other = StreamOrigin()
            try await other.start()
            defer { other.stop() }
            let server = try await InProcessServer.start(arguments: ["--origin", origin.url("")])
            #expect(try await TestHTTP.get(server.url("/fmp4/index.m3u8")).status == 200)
            // Another port of the origin's host: an unrelated service there.
            let elsewhere = try await TestHTTP.get(server.url("/o/http/127.0.0.1:\(other.port)/fmp4/index.m3u8"))
            #expect(elsewhere.status == 403, "\(elsewhere.text)")
            #expect(other.total == 0, "another port of the origin's host was fetched")
            // hlscache itself, and a chain of prefixes through it.
            let own = "/o/http/127.0.0.1:\(server.port)"
            let itself = try await TestHTTP.get(server.url(own + "/healthz"))
            #expect(itself.status == 508, "\(itself.text)")
            let chain = try await TestHTTP.get(server.url(String(repeating: own, count: 50) + "/fmp4/seg1.m4s"))
            #expect(chain.status == 508, "\(chain.text)")
            let chained = try await TestHTTP.get(
                server.url("/o/http/127.0.0.1:\(origin.port)/o/http/127.0.0.1:\(origin.port)/fmp4/seg1.m4s"))
            #expect(chained.status == 508, "\(chained.text) \(chained.headers)")
            #expect(try await server.metric("hlscache_origin_fetches_total") <= 1)
            await server.stop()
            // The other port, allowed by name.
            let allowed = try await InProcessServer.start(
                arguments: ["--origin", origin.url(""), "--allow-host", "127.0.0.1:\(other.port)"])
            #expect(
                try await TestHTTP.get(allowed.url("/o/http/127.0.0.1:\(other.port)/fmp4/index.m3u8")).status == 200)
            await allowed.stop()
        }
    }

    @Test(
        "item 7: an unscoped origin header goes to the reverse origin's port alone; with an open policy serve refuses")
    func originHeadersAreScoped() async throws {
        let secret = "Bearer s3cr3t-probe-token"
        let open = try await ChildProcess.run(
            ServerProcess.binary.path, ["serve", "--origin-header", "Authorization: \(secret)"], timeout: 30)
        #expect(open.status != 0, "serve started with a credential for any host")
        #expect(open.errors.contains("Scope it"), "\(open.errors)")
        #expect(!open.errors.contains("s3cr3t"), "the refusal printed the secret")
        try await StreamOrigin.withRunning { origin in
            // Any public host is allowed (the default), private ones too: the header still goes to the origin only.
            let server = try await InProcessServer.start(
                arguments: [
                    "--origin", origin.url(""), "--allow-private-networks", "--origin-header",
                    "Authorization: \(secret)",
                ])
            let own = try await TestHTTP.get(server.url("/headers"))
            #expect(own.text.lowercased().contains("authorization: \(secret.lowercased())"), "\(own.text)")
            // The same service by another name: a host a viewer names.
            let named = try await TestHTTP.get(server.url("/o/http/localhost:\(origin.port)/headers"))
            #expect(named.status == 200, "\(named.text)")
            #expect(!named.text.lowercased().contains("authorization"), "the credential reached \(named.text)")
            // Another port of the origin's own host (the attack session's way): not there either.
            let other = StreamOrigin()
            try await other.start()
            defer { other.stop() }
            let elsewhere = try await TestHTTP.get(server.url("/o/http/127.0.0.1:\(other.port)/headers"))
            #expect(elsewhere.status == 200, "\(elsewhere.text)")
            #expect(!elsewhere.text.lowercased().contains("authorization"), "the credential reached another port")
            await server.stop()
        }
    }

    @Test("item 14: proxied HTML is sandboxed and nothing is sniffed")
    func proxiedDocumentsAreSandboxed() async throws {
        try await withServer { server, origin in
            origin.set("/page.html", .body("<script>alert(1)</script>", contentType: "text/html"))
            origin.set("/image.svg", .body("<svg/>", contentType: "image/svg+xml; charset=utf-8"))
            for round in ["miss", "hit"] {
                let html = try await TestHTTP.get(server.proxied(origin.url("/page.html")))
                #expect(html.status == 200)
                #expect(html.header("content-security-policy") == "sandbox", "\(round): \(html.headers)")
                #expect(html.header("x-content-type-options") == "nosniff", "\(round)")
                let svg = try await TestHTTP.get(server.proxied(origin.url("/image.svg")))
                #expect(svg.header("content-security-policy") == "sandbox", "\(round): \(svg.headers)")
                let segment = try await TestHTTP.get(server.proxied(origin.url("/fmp4/seg1.m4s")))
                #expect(segment.header("x-content-type-options") == "nosniff", "\(round)")
                #expect(segment.header("content-security-policy") == nil, "\(round)")
                try await Task.sleep(for: .milliseconds(200))
            }
        }
    }

    @Test("item 15: a request with no Host or two gets 400; a malformed --origin-header is refused unprinted")
    func hostFieldsAndHeaderErrors() async throws {
        try await withServer { server, origin in
            let path = "/o/http/127.0.0.1:\(origin.port)/fmp4/index.m3u8"
            for head in [
                "GET \(path) HTTP/1.1\r\n\r\n",
                "GET \(path) HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
                "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n",
            ] {
                let connection = try RawConnection(port: server.port)
                #expect(connection.send(head))
                let answer = try connection.readAnswer()
                #expect(answer.status == 400, "\(head.debugDescription): \(answer.status)")
            }
            let fine = try RawConnection(port: server.port)
            #expect(fine.send("GET \(path) HTTP/1.1\r\nHost: a\r\n\r\n"))
            #expect(try fine.readAnswer().status == 200)
            // HTTP/1.0 needs no Host.
            let old = try RawConnection(port: server.port)
            #expect(old.send("GET /healthz HTTP/1.0\r\n\r\n"))
            #expect(try old.readAnswer().status == 200)
        }
        let secret = "Bearertokenwithoutcolon0123456789"
        let refused = try await ChildProcess.run(
            ServerProcess.binary.path, ["serve", "--origin-header", secret], timeout: 30)
        #expect(refused.status != 0)
        #expect(refused.errors.contains("--origin-header"), "\(refused.errors)")
        #expect(!refused.errors.contains("Bearertoken"), "the error printed the value: \(refused.errors)")
    }
}

/// Item 12: an entry file cut short in place.
@Suite("Hardening probe: damaged entries", .serialized, .sharedMachine)
struct DamagedEntryTests {
    @Test("item 12: an entry truncated in place is found on the hit path and removed, with no spin on sendfile")
    func truncatedEntryIsRemoved() async throws {
        try await StreamOrigin.withRunning { origin in
            let server = try await ServerProcess.start(arguments: ["--allow-host", "127.0.0.1"])
            let directory = server.cacheDirectory
            let url = server.proxied(origin.url("/large/2000000.ts"))
            let first = try await TestHTTP.get(url)
            #expect(first.status == 200 && first.body.count == 2_000_000)
            // The entry file: the one larger than the object.
            var entry: String?
            for _ in 0..<100 where entry == nil {
                let files = FileManager.default.enumerator(atPath: directory)?.compactMap { $0 as? String } ?? []
                entry = files.first { name in
                    let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name))?[.size]
                    return !name.hasPrefix("tmp") && ((size as? Int) ?? 0) > 2_000_000
                }
                if entry == nil { try await Task.sleep(for: .milliseconds(20)) }
            }
            let path = directory + "/" + (entry ?? "")
            #expect(entry != nil, "no entry file in \(directory)")
            #expect(truncate(path, 1_000_000) == 0)
            let cpuBefore = server.cpuTicks
            for _ in 0..<3 {
                let again = try? await TestHTTP.get(url)
                // A fresh copy, or an error answer: never the short file's bytes as the object.
                if let again, again.status == 200 { #expect(again.body == first.body) }
            }
            try await Task.sleep(for: .seconds(2))
            let spent = server.cpuTicks - cpuBefore
            #expect(spent < 100, "the server spent \(spent) ticks on a damaged entry")
            let final = try await TestHTTP.get(url)
            #expect(final.status == 200 && final.body == first.body)
            #expect(server.process.isRunning)
            await server.stop()
        }
    }
}

/// Item 8: a live segment asked for before the origin published it.
@Suite("Hardening probe: negative answers", .sharedMachine)
struct NegativeAnswerTests {
    /// A live playlist of `segments` of `target` seconds, in `directory` relative to the playlist's (its own by
    /// default).
    static func playlist(
        _ segments: ClosedRange<Int>, directory: String = "", target: Int = 1
    ) -> StreamOrigin.Behavior {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:\(target)\n#EXT-X-MEDIA-SEQUENCE:\(segments.lowerBound)\n"
        for number in segments { text += "#EXTINF:\(target).0,\n\(directory)seg\(number).ts\n" }
        return .answer(text, headers: [.contentType: "application/vnd.apple.mpegurl"])
    }

    @Test("item 8: a remembered 404 goes when a newer live playlist lists the segment")
    func negativeEntryDropsWithNewerPlaylist() async throws {
        try await withServer { server, origin in
            // The segments in a directory of their own: the 404 is remembered for the whole --negative-ttl (10 s),
            // not capped by a live playlist beside them, so only the newer playlist can drop it.
            origin.set("/neg/live.m3u8", Self.playlist(1...1, directory: "../negseg/"))
            origin.set("/negseg/seg1.ts", .body("one", contentType: "video/mp2t"))
            origin.set("/negseg/seg2.ts", .status(404))
            let playlist = server.proxied(origin.url("/neg/live.m3u8"))
            let segment = server.proxied(origin.url("/negseg/seg2.ts"))
            #expect(try await TestHTTP.get(playlist).status == 200)
            // Too early: the origin has not published it; the 404 is remembered (--negative-ttl, 10 s).
            #expect(try await TestHTTP.get(segment).status == 404)
            #expect(try await TestHTTP.get(segment).status == 404)
            #expect(origin.count("/negseg/seg2.ts") == 1, "the 404 was not remembered")
            // Published, and listed by the next version of the playlist.
            origin.set("/negseg/seg2.ts", .body("two", contentType: "video/mp2t"))
            origin.set("/neg/live.m3u8", Self.playlist(1...2, directory: "../negseg/"))
            var listed = false
            for _ in 0..<60 where !listed {
                try await Task.sleep(for: .milliseconds(100))
                listed = try await TestHTTP.get(playlist).text.contains("negseg/seg2.ts")
            }
            #expect(listed, "the playlist was not refreshed")
            let answer = try await TestHTTP.get(segment)
            #expect(answer.status == 200 && answer.text == "two", "\(answer.status) \(answer.text)")
        }
    }

    @Test("item 8: a live segment's 404 is remembered for half a target duration at most")
    func liveNegativeEntryIsShort() async throws {
        try await withServer { server, origin in
            // Target duration 6 s: remembered 3 s (not --negative-ttl's 10 s), the playlist not asked for again.
            origin.set("/neg2/live.m3u8", Self.playlist(1...1, target: 6))
            origin.set("/neg2/seg1.ts", .body("one", contentType: "video/mp2t"))
            origin.set("/neg2/seg2.ts", .status(404))
            #expect(try await TestHTTP.get(server.proxied(origin.url("/neg2/live.m3u8"))).status == 200)
            let segment = server.proxied(origin.url("/neg2/seg2.ts"))
            #expect(try await TestHTTP.get(segment).status == 404)
            #expect(try await TestHTTP.get(segment).status == 404)
            #expect(origin.count("/neg2/seg2.ts") == 1, "the 404 was not remembered at all")
            // Published; the playlist is not asked for again. Half a target duration (3 s) later: fetched anew.
            origin.set("/neg2/seg2.ts", .body("two", contentType: "video/mp2t"))
            try await Task.sleep(for: .milliseconds(3_500))
            let answer = try await TestHTTP.get(segment)
            #expect(answer.status == 200 && answer.text == "two", "\(answer.status) \(answer.text)")
        }
    }
}

/// Item 2: misses abandoned by their clients, by the hundred.
@Suite("Hardening probe: abandoned misses", .serialized, .sharedMachine)
struct AbandonedMissTests {
    @Test("item 2: abandoned misses of slow objects are bounded by --max-fills; the rest get 503; health answers")
    func abandonedMissesAreBounded() async throws {
        try await StreamOrigin.withRunning { origin in
            let server = try await ServerProcess.start(
                arguments: ["--allow-host", "127.0.0.1", "--max-fills", "32", "--read-ahead", "0"])
            for index in 0..<200 { origin.set("/slow/\(index).ts", .delayedStatus(.seconds(6), 404)) }
            origin.set("/slow/late.ts", .delayedStatus(.seconds(6), 404))
            for index in 0..<200 {
                let connection = try RawConnection(port: server.port)
                connection.send(RawConnection.request("GET", "/o/http/127.0.0.1:\(origin.port)/slow/\(index).ts"))
                connection.close()
            }
            // A client that stays, while the first fills hold every slot: the refusal with when to ask again.
            let late = try await TestHTTP.get(server.proxied(origin.url("/slow/late.ts")))
            #expect(late.status == 503 && late.header("retry-after") == "1", "\(late.status) \(late.text)")
            var refused = 0.0
            for _ in 0..<100 where refused < 100 {
                try await Task.sleep(for: .milliseconds(50))
                refused = try await server.metric("hlscache_fills_refused_total")
            }
            #expect(refused >= 100, "\(refused) misses refused")
            #expect(try await server.metric("hlscache_fills_in_flight") <= 32)
            let started = ContinuousClock.now
            #expect(try await TestHTTP.get(server.url("/healthz")).status == 200)
            // At once, not behind the held fills (6 s): a bound for a busy machine.
            #expect(ContinuousClock.now - started < .seconds(3))
            let descriptors =
                (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(server.process.processIdentifier)/fd"))?
                .count ?? 0
            #expect(descriptors < 400, "\(descriptors) descriptors open")
            await server.stop()
        }
    }
}

/// Item 1, after a restart: an MPD stored by an earlier release that no longer renders.
@Suite("Hardening probe: stored manifests that do not render", .serialized, .sharedMachine)
struct StoredManifestTests {
    /// Answers every key with one MPD, stored for a day.
    struct StoredMPD: ObjectSource {
        let bytes: [UInt8]
        func fetch(_ key: CacheKey) async throws -> SourceResponse {
            SourceResponse(
                status: 200, cacheable: true, contentType: "application/dash+xml",
                contentLength: Int64(bytes.count), expiry: Date().addingTimeInterval(86_400),
                kind: ObjectKind.dashManifest.rawValue, body: SourceBody(chunks: [bytes]))
        }
    }

    @Test("item 1: a stored MPD that does not render is answered 502 and removed; the next request fetches it anew")
    func storedManifestThatFailsIsRemoved() async throws {
        try await StreamOrigin.withRunning { origin in
            let url = origin.url("/stored/manifest.mpd")
            let hostile = """
                <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT100S">
                <Period><AdaptationSet>
                <SegmentTemplate media="s$Number$.m4s" duration="1" startNumber="9223372036854775807"/>
                <Representation id="v" bandwidth="1"/></AdaptationSet></Period></MPD>
                """
            // The entry an earlier release stored (it crashed on every render, restart after restart).
            let directory = ServerProcess.temporaryDirectory()
            let cache = try SegmentCache(
                configuration: .init(directory: directory, maxBytes: 1 << 30, sync: .never),
                source: StoredMPD(bytes: Array(hostile.utf8)))
            let key = CacheKeyPolicy().key(origin: url, requested: nil)
            for try await _ in try await cache.fetch(key).body {}
            await cache.close()
            let valid = hostile.replacingOccurrences(of: "9223372036854775807", with: "1")
            origin.set("/stored/manifest.mpd", .answer(valid, headers: [.contentType: "application/dash+xml"]))
            let server = try await InProcessServer.start(
                cacheDirectory: directory, arguments: ["--allow-host", "127.0.0.1"])
            let first = try await TestHTTP.get(server.proxied(url))
            #expect(first.status == 502, "\(first.status) \(first.text)")
            #expect(first.text.contains("invalid MPD"), "\(first.text)")
            #expect(origin.count("/stored/manifest.mpd") == 0, "the stored copy was not the one answered")
            let second = try await TestHTTP.get(server.proxied(url))
            #expect(second.status == 200, "\(second.status) \(second.text)")
            #expect(origin.count("/stored/manifest.mpd") == 1)
            #expect(server.isRunning)
            await server.stop()
        }
    }
}

/// What the attack session on this release found, each a way back in.
@Suite("Hardening probe: the attack session", .serialized, .sharedMachine)
struct AttackSessionTests {
    @Test("an origin redirecting back to hlscache is a loop stopped at its first return (Via), not a recursion")
    func redirectBackIsALoop() async throws {
        try await StreamOrigin.withRunning { origin in
            let server = try await InProcessServer.start(arguments: [
                "--allow-host", "127.0.0.1", "--allow-private-networks",
            ])
            origin.set("/loop.ts", .redirect(server.proxied(origin.url("/loop.ts?n=1"))))
            let answer = try await TestHTTP.get(server.proxied(origin.url("/loop.ts")))
            #expect(answer.status == 502 || answer.status == 508, "\(answer.status) \(answer.text)")
            #expect(origin.count("/loop.ts") <= 2, "\(origin.count("/loop.ts")) origin requests for one request")
            #expect(try await server.settledLog().contains("status=508"), "the loop was not refused where it came back")
            // A redirect to its own counters is not followed into them either.
            origin.set("/metrics.ts", .redirect(server.url("/metrics")))
            let metrics = try await TestHTTP.get(server.proxied(origin.url("/metrics.ts")))
            #expect(!metrics.text.contains("hlscache_requests_total"), "\(metrics.status)")
            await server.stop()
        }
    }

    @Test("every spelling of this server's loopback address is a loop, and admin refusals carry no CORS grant")
    func numericSelfSpellingsAndAdminRefusals() async throws {
        try await withServer(
            arguments: ["--allow-private-networks", "--admin-token", "admin-token-0123456789"]
        ) { server, origin in
            for host in ["2130706433", "127.1", "0x7f000001", "0177.0.0.1", "127.000.000.001"] {
                let answer = try await TestHTTP.get(server.url("/o/http/\(host):\(server.port)/metrics"))
                #expect(answer.status == 508, "\(host): \(answer.status) \(answer.text)")
            }
            let page = [(name: "Origin", value: "http://127.0.0.1:9")]
            let wrongMethod = try await TestHTTP.get(server.url("/admin/purge"), headers: page)
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.header("access-control-allow-origin") == nil, "\(wrongMethod.headers)")
            let nothing = try await TestHTTP.send("PURGE", server.url("/nothing"), headers: ["Origin: http://a.test"])
            #expect(nothing.status == 404)
            #expect(nothing.headers["access-control-allow-origin"] == nil, "\(nothing.headers)")
        }
    }

    @Test("an entry cut short while it is being sent closes the connection within seconds, with no spin")
    func truncatedDuringSendCloses() async throws {
        try await StreamOrigin.withRunning { origin in
            let server = try await ServerProcess.start(arguments: ["--allow-host", "127.0.0.1"])
            let path = "/o/http/127.0.0.1:\(origin.port)/large/40000000.ts"
            #expect(try await TestHTTP.get(server.url(path)).body.count == 40_000_000)
            // The published entry, not the fill's `tmp/….part`, which the answer's last byte may come before.
            var entry: String?
            #expect(
                try await eventually {
                    entry = publishedEntryFiles(in: server.cacheDirectory).first { path in
                        let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size]
                        return ((size as? Int) ?? 0) > 40_000_000
                    }
                    return entry != nil
                })
            guard let entry else {
                Issue.record("no entry file")
                return
            }
            // A reader that takes the head and a little, then stops reading: the send is under way.
            let connection = try RawConnection(port: server.port)
            #expect(connection.send(RawConnection.request("GET", path)))
            _ = try connection.read(upTo: 64 << 10)
            #expect(truncate(entry, 1_000) == 0)
            let before = server.cpuTicks
            // Read what is left of the socket's buffers: the server must end the answer short and close.
            let closed = connection.waitForPeerClose(timeout: .seconds(5))
            #expect(closed, "the server did not close the connection")
            let spent = server.cpuTicks - before
            #expect(spent < 200, "\(spent) ticks spent while the damaged entry was being sent")
            #expect(try await TestHTTP.get(server.url(path)).body.count == 40_000_000)
            await server.stop()
        }
    }
}
