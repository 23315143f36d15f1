import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// CORS: web players (hls.js, video.js) on another origin may read every answer, preflights are answered without
/// an origin request, and `--cors-origin` narrows or turns it off.
@Suite("CORS", .sharedMachine)
struct CORSTests {
    static let page = [(name: "Origin", value: "http://127.0.0.1:9")]

    @Test(
        "playlists, segments (miss and hit) and errors carry Access-Control-Allow-Origin: *; own routes none",
        arguments: [false, true])
    func everyAnswerCarriesTheHeaders(viaDecoder: Bool) async throws {
        // `Proxy-Connection` is the decoder's to read: with it, the responder answers every request.
        let page = Self.page + (viaDecoder ? [(name: "Proxy-Connection", value: "keep-alive")] : [])
        try await withServer { server, origin in
            let playlist = server.proxied(origin.url("/fmp4/index.m3u8"))
            let segment = server.proxied(origin.url("/fmp4/seg1.m4s"))
            let miss = try await TestHTTP.get(playlist, headers: page)
            // A hit once the playlist's entry is published (it is, shortly after the first answer).
            var hit = try await TestHTTP.get(playlist, headers: page)
            for _ in 0..<100 where hit.header("x-cache") != "HIT" {
                try await Task.sleep(for: .milliseconds(20))
                hit = try await TestHTTP.get(playlist, headers: page)
            }
            let answers = [
                miss, hit,
                try await TestHTTP.get(segment, headers: page),
                try await TestHTTP.get(segment, headers: page + [(name: "Range", value: "bytes=0-99")]),
                try await TestHTTP.get(server.proxied(origin.url("/missing.ts")), headers: page),
                try await TestHTTP.get(server.url("/o/http/10.0.0.1/a.ts"), headers: page),
            ]
            #expect(answers.map(\.status) == [200, 200, 200, 206, 404, 403])
            // The status page (the cache's contents), the counters and health are the operator's: no page's script
            // may read them.
            for path in ["/", "/metrics", "/healthz"] {
                let own = try await TestHTTP.get(server.url(path), headers: page)
                #expect(own.status == 200, "\(path)")
                #expect(own.header("access-control-allow-origin") == nil, "\(path): \(own.headers)")
            }
            for answer in answers {
                #expect(answer.header("access-control-allow-origin") == "*", "\(answer.status): \(answer.headers)")
                let exposed = answer.header("access-control-expose-headers") ?? ""
                for name in ["Content-Length", "Content-Range", "X-Cache", "Age"] {
                    #expect(exposed.contains(name), "\(name) is not exposed: \(exposed)")
                }
            }
            #expect(answers[1].header("x-cache") == "HIT")
        }
    }

    @Test(
        "a preflight is answered 204 with methods, the asked headers players use and a max-age, without an origin request"
    )
    func preflightIsAnsweredLocally() async throws {
        try await withServer { server, origin in
            for path in ["/fmp4/index.m3u8", "/fmp4/seg1.m4s"] {
                let connection = try RawConnection(port: server.port)
                let target = "/o/http/127.0.0.1:\(origin.port)" + path
                #expect(
                    connection.send(
                        RawConnection.request(
                            "OPTIONS", target,
                            extra: [
                                "Origin: http://127.0.0.1:9", "Access-Control-Request-Method: GET",
                                "Access-Control-Request-Headers: range, authorization, CMCD-Request, x-evil",
                            ])))
                let answer = try connection.readAnswer()
                #expect(answer.status == 204)
                #expect(answer.headers["access-control-allow-origin"] == "*")
                #expect(answer.headers["access-control-allow-methods"]?.contains("GET") == true)
                // Only what players send: never `authorization` (the admin token), nor any name a page asks for.
                #expect(answer.headers["access-control-allow-headers"] == "range, CMCD-Request")
                #expect(answer.headers["access-control-max-age"] == "86400")
                #expect(origin.count(path) == 0, "a preflight reached the origin")
            }
            #expect(
                try await eventually { server.log.contains("method=OPTIONS") }, "the preflight was not logged")
        }
    }

    @Test("--cors-origin none sends no CORS headers; a list echoes only a listed page origin, with Vary: Origin")
    func corsOriginNarrowsOrTurnsOff() async throws {
        try await withServer(arguments: ["--cors-origin", "none"]) { server, origin in
            let answer = try await TestHTTP.get(server.proxied(origin.url("/fmp4/index.m3u8")), headers: Self.page)
            #expect(answer.status == 200)
            #expect(answer.header("access-control-allow-origin") == nil)
            #expect(answer.header("access-control-expose-headers") == nil)
            let connection = try RawConnection(port: server.port)
            #expect(connection.send(RawConnection.request("OPTIONS", "/healthz", extra: ["Origin: http://a.test"])))
            #expect(try connection.readAnswer().headers["access-control-allow-origin"] == nil)
        }
        try await withServerProcess(environment: ["HLSCACHE_CORS_ORIGIN": "http://a.test,https://b.test"]) {
            server, origin in
            let url = server.proxied(origin.url("/fmp4/index.m3u8"))
            let listed = try await TestHTTP.get(url, headers: [(name: "Origin", value: "https://b.test")])
            #expect(listed.header("access-control-allow-origin") == "https://b.test")
            #expect(listed.header("vary")?.contains("Origin") == true)
            let other = try await TestHTTP.get(url, headers: [(name: "Origin", value: "https://evil.test")])
            #expect(other.status == 200)
            #expect(other.header("access-control-allow-origin") == nil)
            #expect(other.header("vary")?.contains("Origin") == true)
        }
        let refused = try await ChildProcess.run(
            ServerProcess.binary.path, ["serve", "--cors-origin", "https://site.test/path"], timeout: 30)
        #expect(refused.status != 0 && refused.errors.contains("--cors-origin"), "\(refused.errors)")
    }
}
