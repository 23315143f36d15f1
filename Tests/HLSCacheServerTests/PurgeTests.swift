import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// Throwing a bad object out of the cache without wiping the directory: `PURGE` and `POST /admin/purge`, behind
/// `--admin-token`.
@Suite("Purge", .sharedMachine)
struct PurgeTests {
    static let token = "admin-token-0123456789"
    static let bearer = "Authorization: Bearer \(token)"

    /// Fetches `url` until it is a hit: a fill is published (renamed into place) just after its answer ends.
    static func cached(_ url: String, headers: [(name: String, value: String)] = []) async throws -> Bool {
        let misses = try await waitForHit(url, headers: headers)
        if !misses.isEmpty {
            // Which answers it got instead, for the expectation that fails on `false`.
            Issue.record(
                "\(url) was no hit in 30 s; \(misses.count) answers: \(misses.prefix(3)) … \(misses.suffix(2))")
        }
        return misses.isEmpty
    }

    /// Asks for `url` until it is a hit, for `seconds` at most: the answers that were not (status and `X-Cache`),
    /// none when it became one.
    static func waitForHit(
        _ url: String, headers: [(name: String, value: String)] = [], seconds: Double = 30
    ) async throws -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        var misses: [String] = []
        while Date() < deadline {
            let answer = try await TestHTTP.get(url, headers: headers)
            if answer.header("x-cache") == "HIT" { return [] }
            misses.append("\(answer.status) \(answer.header("x-cache") ?? "-") \(answer.body.count) bytes")
            try await Task.sleep(for: .milliseconds(50))
        }
        return misses
    }

    @Test("PURGE needs the admin token: 401 without one, 403 with a wrong one; with it the next request is a miss")
    func purgeOneObject() async throws {
        try await withServer(arguments: ["--admin-token", Self.token, "--read-ahead", "0"]) { server, origin in
            let url = server.proxied(origin.url("/fmp4/seg0.m4s"))
            #expect(try await Self.cached(url))

            let anonymous = try await TestHTTP.send("PURGE", url)
            #expect(anonymous.status == 401)
            #expect(anonymous.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
            #expect(anonymous.headers["access-control-allow-origin"] == nil, "admin answers carry no CORS grant")
            let wrong = try await TestHTTP.send("PURGE", url, headers: ["Authorization: Bearer not-the-token"])
            #expect(wrong.status == 403)
            #expect(try await TestHTTP.get(url).header("x-cache") == "HIT", "a refused purge removed something")

            let purged = try await TestHTTP.send("PURGE", url, headers: [Self.bearer])
            #expect(purged.status == 200)
            #expect(purged.text == "{\"purged\":1}\n")
            let again = try await TestHTTP.get(url)
            #expect(again.status == 200 && again.header("x-cache") == "MISS")
            #expect(origin.count("/fmp4/seg0.m4s") == 2)

            let metrics = try await TestHTTP.get(server.url("/metrics")).text
            #expect(metrics.contains("hlscache_purged_entries_total 1"), "\(metrics)")
            #expect(metrics.contains("hlscache_purge_requests_total{result=\"unauthorized\"} 1"))
            #expect(metrics.contains("hlscache_purge_requests_total{result=\"forbidden\"} 1"))
            #expect(!(try await server.settledLog()).contains(Self.token), "the admin token was logged")
        }
    }

    @Test(
        "a hit being sent from its file when the object is purged arrives whole: the send holds the file open",
        .timeLimit(.minutes(2)))
    func purgeDuringASendLeavesItWhole() async throws {
        try await withServer(arguments: ["--admin-token", Self.token, "--read-ahead", "0"]) { server, origin in
            let size = 16 << 20
            let path = "/o/http/127.0.0.1:\(origin.port)/large/\(size).ts"
            // A debug build with the whole suite running took 7.4 s to fetch and send these 16 MiB the first time.
            let misses = try await Self.waitForHit(server.url(path), seconds: 60)
            if !misses.isEmpty {
                let log = try await server.settledLog()
                Issue.record("never a hit: \(misses.prefix(5)); the server's log ends: \(log.suffix(3000))")
                return
            }
            let connection = try RawConnection(port: server.port)
            connection.send(RawConnection.request("GET", path))
            // The player stops reading: the rest of the file waits in the server's send.
            let head = try #require(connection.readResponseHead())
            #expect(head.lowercased().contains("x-cache: hit"), "\(head)")
            let first = try connection.read(upTo: 64 << 10)
            let purged = try await TestHTTP.send("PURGE", server.url(path), headers: [Self.bearer])
            #expect(purged.status == 200 && purged.text == "{\"purged\":1}\n")
            var body = first
            while body.count < size {
                let more = try connection.read(upTo: min(1 << 20, size - body.count))
                guard !more.isEmpty else { break }
                body += more
            }
            #expect(body.count == size)
            #expect(body == StreamOrigin.pattern(count: size), "the purged file's bytes changed under the send")
            #expect(try await TestHTTP.get(server.url(path)).header("x-cache") == "MISS")
        }
    }

    @Test("PURGE removes every byte range of an object too")
    func purgeRemovesRanges() async throws {
        try await withServer(arguments: ["--admin-token", Self.token, "--read-ahead", "0"]) { server, origin in
            let url = server.proxied(origin.url("/byterange/media.ts"))
            for range in ["bytes=0-999", "bytes=1000-1999"] {
                #expect(try await Self.cached(url, headers: [("Range", range)]))
            }
            #expect(try await Self.cached(url))
            let purged = try await TestHTTP.send("PURGE", url, headers: [Self.bearer])
            #expect(purged.text == "{\"purged\":3}\n")
            let ranged = try await TestHTTP.get(url, headers: [("Range", "bytes=0-999")])
            #expect(ranged.status == 206 && ranged.header("x-cache") == "MISS")
        }
    }

    @Test("POST /admin/purge removes everything under a prefix, rewritten playlists in memory included")
    func purgeByPrefix() async throws {
        try await withServer(arguments: ["--admin-token", Self.token, "--read-ahead", "0"]) { server, origin in
            let playlist = server.proxied(origin.url("/fmp4/index.m3u8"))
            for path in ["/fmp4/index.m3u8", "/fmp4/init.mp4", "/fmp4/seg0.m4s", "/aes128/seg0.ts"] {
                #expect(try await Self.cached(server.proxied(origin.url(path))))
            }

            let missing = try await TestHTTP.send("POST", server.url("/admin/purge"), headers: [Self.bearer])
            #expect(missing.status == 400)
            let prefix = origin.url("/fmp4/").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let purged = try await TestHTTP.send(
                "POST", server.url("/admin/purge?prefix=\(prefix)"), headers: [Self.bearer])
            #expect(purged.status == 200)
            #expect(purged.text == "{\"purged\":3}\n")
            #expect(try await TestHTTP.get(playlist).header("x-cache") == "MISS")
            #expect(origin.count("/fmp4/index.m3u8") == 2)
            let other = try await TestHTTP.get(server.proxied(origin.url("/aes128/seg0.ts")))
            #expect(other.header("x-cache") == "HIT", "an entry outside the prefix went")

            // A proxy path in a form body works too.
            let form = try await TestHTTP.send(
                "POST", server.url("/admin/purge"), headers: [Self.bearer],
                body: "prefix="
                    + server.proxied(origin.url("/aes128/")).replacingOccurrences(of: server.url(""), with: ""))
            #expect(form.text == "{\"purged\":1}\n")
        }
    }

    @Test("item 11: a prefix purge finds other spellings of a URL and entries another process published")
    func purgeFindsEverything() async throws {
        try await withServer(arguments: ["--admin-token", Self.token, "--read-ahead", "0"]) { server, origin in
            // One object, three spellings: one key.
            let plain = server.proxied(origin.url("/fmp4/seg1.m4s"))
            let shouted = server.url("/o/HTTP/127.0.0.1:\(origin.port)//fmp4//seg1.m4s")
            #expect(try await Self.cached(plain))
            #expect(try await TestHTTP.get(shouted).header("x-cache") == "HIT")
            #expect(origin.count("/fmp4/seg1.m4s") == 1)
            // A prefetch into the server's directory: entries the server's index has not seen.
            let prefetch = try await ChildProcess.run(
                ServerProcess.binary.path,
                [
                    "prefetch", "--cache-dir", server.cacheDirectory, "--allow-host", "127.0.0.1",
                    "--allow-private-networks", origin.url("/aes128/index.m3u8"),
                ], timeout: 120)
            #expect(prefetch.status == 0, "\(prefetch.errors)")
            let prefix = "HTTP://127.0.0.1:\(origin.port)/".addingPercentEncoding(
                withAllowedCharacters: .alphanumerics)!
            let purged = try await TestHTTP.send(
                "POST", server.url("/admin/purge?prefix=\(prefix)"), headers: [Self.bearer])
            #expect(purged.status == 200)
            let count = Int(purged.text.filter(\.isNumber)) ?? 0
            #expect(count > 2, "\(purged.text)")
            #expect(try await TestHTTP.get(shouted).header("x-cache") == "MISS")
            let fetchesBefore = origin.count("/aes128/seg0.ts")
            #expect(try await TestHTTP.get(server.proxied(origin.url("/aes128/seg0.ts"))).header("x-cache") == "MISS")
            #expect(origin.count("/aes128/seg0.ts") == fetchesBefore + 1)
        }
    }

    /// Two GETs of `url` on one connection with its PURGE pipelined behind them, then a GET as soon as the purge's
    /// answer is read: all within a kept hit's lease (10 ms), so that the last GET would be answered from the kept
    /// hit if it outlived the purge. The four answers, in order.
    static func hitsThenPurge(_ url: String, on server: any RunningServer) async throws -> [RawConnection.Answer] {
        let target = url.replacingOccurrences(of: server.url(""), with: "")
        let port = server.port
        return try await offPool { () -> [RawConnection.Answer] in
            let connection = try RawConnection(port: port, timeout: 10)
            _ = connection.send(
                RawConnection.request("GET", target) + RawConnection.request("GET", target)
                    + RawConnection.request("PURGE", target, extra: [Self.bearer]))
            var answers = try (0..<3).map { _ in try connection.readAnswer() }
            _ = connection.send(RawConnection.request("GET", target))
            answers.append(try connection.readAnswer())
            return answers
        }
    }

    @Test("a live playlist the event loops answer again and again is a miss right after its purge")
    func keptLivePlaylistHitGivesWayToAPurge() async throws {
        try await withServer(arguments: ["--admin-token", Self.token, "--read-ahead", "0"]) { server, origin in
            let path = "/kept/live.m3u8"
            // Fresh for half its target duration: 30 s, longer than this test on a loaded machine.
            let playlist = GraceTests.livePlaylist.replacingOccurrences(
                of: "#EXT-X-TARGETDURATION:4", with: "#EXT-X-TARGETDURATION:60")
            origin.set(path, .body(playlist, contentType: "application/vnd.apple.mpegurl"))
            let url = server.proxied(origin.url(path))
            #expect(try await Self.cached(url))
            // Hits on new connections, so that both event loops keep the hit and answer it again.
            for _ in 0..<10 { #expect(try await TestHTTP.get(url).header("x-cache") == "HIT") }
            let fetched = origin.count(path)

            let answers = try await Self.hitsThenPurge(url, on: server)
            #expect(answers.map(\.status) == [200, 200, 200, 200])
            #expect(
                [0, 1, 3].map { answers[$0].headers["x-cache"] ?? "" } == ["HIT", "HIT", "MISS"],
                "a kept hit outlived its purge")
            #expect(origin.count(path) == fetched + 1)
        }
    }

    @Test("without --admin-token the admin routes do not exist")
    func noTokenNoRoutes() async throws {
        try await withServer { server, origin in
            let url = server.proxied(origin.url("/fmp4/seg0.m4s"))
            #expect(try await Self.cached(url))
            let purge = try await TestHTTP.send("PURGE", url, headers: [Self.bearer])
            #expect(purge.status == 405)
            let admin = try await TestHTTP.send(
                "POST", server.url("/admin/purge?prefix=http://x/"), headers: [Self.bearer])
            #expect(admin.status == 405 || admin.status == 404)
            #expect(try await TestHTTP.get(url).header("x-cache") == "HIT")
        }
        let weak = try await ChildProcess.run(
            ServerProcess.binary.path, ["serve", "--admin-token", "short"], timeout: 30)
        #expect(weak.status != 0 && weak.errors.contains("--admin-token"))
    }
}
