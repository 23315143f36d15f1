import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// What real origins need besides a URL: headers the CDN insists on (for every host or one), a User-Agent, and an
/// upstream proxy, in `serve` and `prefetch` alike.
@Suite("Origin headers and upstream proxy", .sharedMachine)
struct OriginAccessTests {
    static let files = ["/fmp4/index.m3u8", "/fmp4/init.mp4", "/fmp4/seg0.m4s", "/fmp4/seg1.m4s", "/fmp4/seg2.m4s"]

    @Test("an origin that answers 403 without the Referer plays with --origin-header, whose value is never logged")
    func refererLetsThePlayerIn() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let direct = try await FFmpeg.framemd5(origin.url("/fmp4/index.m3u8"))
        for path in Self.files {
            origin.set(path, .requiring(header: "Referer", value: "https://site.test/secret-ref"))
        }

        let without = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1"])
        let refused = try await TestHTTP.get(without.proxied(origin.url("/fmp4/index.m3u8")))
        #expect(refused.status == 403)
        await without.stop()

        let server = try await InProcessServer.start(
            arguments: ["--allow-host", "127.0.0.1", "--origin-header", "Referer: https://site.test/secret-ref"])
        let played = try await FFmpeg.framemd5(server.proxied(origin.url("/fmp4/index.m3u8")))
        #expect(played.status == 0, "\(played.errors)")
        #expect(played.output == direct.output)
        #expect(!(try await server.settledLog()).contains("secret-ref"), "a header value was logged")
        await server.stop()
    }

    @Test("a header scoped to one host goes to that host only; --user-agent replaces hlscache's")
    func scopedHeadersAndUserAgent() async throws {
        try await withServer(
            arguments: [
                "--origin-header", "127.0.0.1=X-Loopback: yes", "--origin-header", "cdn.example.com=X-Cdn: yes",
                "--origin-header", "X-All: a, b", "--user-agent", "TestAgent/1.0",
            ]
        ) { server, origin in
            let echoed = try await TestHTTP.get(server.proxied(origin.url("/headers")))
            #expect(echoed.status == 200)
            let lines = Set(echoed.text.split(separator: "\n").map { $0.lowercased() })
            #expect(lines.contains("x-loopback: yes"), "\(lines)")
            #expect(lines.contains("x-all: a, b"), "\(lines)")
            #expect(lines.contains("user-agent: testagent/1.0"), "\(lines)")
            #expect(!lines.contains { $0.hasPrefix("x-cdn") }, "a header scoped to another host was sent")
        }
        // One header per line in the environment (values may hold commas).
        try await withServerProcess(environment: ["HLSCACHE_ORIGIN_HEADER": "X-One: 1, 2\nX-Two: 3"]) {
            server, origin in
            let lines = try await TestHTTP.get(server.proxied(origin.url("/headers"))).text.lowercased()
            #expect(lines.contains("x-one: 1, 2\n") && lines.contains("x-two: 3\n"), "\(lines)")
        }
    }

    @Test("hop-by-hop and framing headers are refused at startup, naming the header but not its value")
    func framingHeadersAreRefused() async throws {
        for header in ["Host: evil.test", "Connection: close", "Transfer-Encoding: chunked", "Range: bytes=0-1"] {
            let result = try await ChildProcess.run(
                ServerProcess.binary.path, ["serve", "--origin-header", header], timeout: 30)
            #expect(result.status != 0)
            let name = String(header.prefix { $0 != ":" })
            #expect(result.errors.contains("--origin-header \(name)"), "\(result.errors)")
            #expect(!result.errors.contains(header.split(separator: " ").last!), "the value was printed")
        }
    }

    @Test(
        "--origin-threads sets how many threads fetch from origins, named apart from the LL-HLS reload client's; a count outside 1 to 64 is refused at startup"
    )
    func originThreadsSetsTheFetchingThreads() async throws {
        try await withServerProcess(arguments: ["--origin-threads", "3"]) { server, origin in
            let segment = try await TestHTTP.get(server.proxied(origin.url("/fmp4/seg0.m4s")))
            #expect(segment.status == 200)
            let names = server.threadNames
            let fetching = names.filter { $0.hasPrefix("hlscache-curl") }.sorted()
            #expect(fetching == ["hlscache-curl0", "hlscache-curl1", "hlscache-curl2"], "\(names)")
            #expect(names.filter { $0 == "hlscache-llhls0" }.count == 1, "\(names)")
        }
        try await withServerProcess(environment: ["HLSCACHE_ORIGIN_THREADS": "1"]) { server, origin in
            let segment = try await TestHTTP.get(server.proxied(origin.url("/fmp4/seg0.m4s")))
            #expect(segment.status == 200)
            let names = server.threadNames
            #expect(names.filter { $0.hasPrefix("hlscache-curl") } == ["hlscache-curl0"], "\(names)")
        }
        let refused = try await ChildProcess.run(
            ServerProcess.binary.path, ["serve", "--origin-threads", "0"], timeout: 30)
        #expect(refused.status != 0)
        #expect(refused.errors.contains("--origin-threads must be 1 to 64"), "\(refused.errors)")
    }

    @Test("with --upstream-proxy every origin request of serve and prefetch goes through it; NO_PROXY hosts do not")
    func upstreamProxyCarriesEveryRequest() async throws {
        let proxy = try ForwardProxy()
        defer { proxy.stop() }
        try await withServer(arguments: ["--upstream-proxy", proxy.url]) { server, origin in
            let played = try await FFmpeg.framemd5(server.proxied(origin.url("/fmp4/index.m3u8")))
            #expect(played.status == 0, "\(played.errors)")
            let fetched = origin.counts.values.reduce(0, +)
            #expect(fetched >= 5)
            #expect(proxy.requests.count == fetched, "\(proxy.requests) vs \(origin.counts)")
            #expect(proxy.requests.allSatisfy { $0.hasPrefix(origin.url("/fmp4/")) }, "\(proxy.requests)")

            let before = proxy.requests.count
            let result = try await PrefetchProcess.run([
                origin.url("/ts-multivariant/master.m3u8"), "--output", ServerProcess.temporaryDirectory() + "/out",
                "--allow-private-networks", "--quiet", "--upstream-proxy", proxy.url,
            ])
            #expect(result.status == 0, "\(result.errors)")
            #expect(proxy.requests.count - before >= 4, "the prefetch did not go through the proxy")
        }
        let direct = try ForwardProxy()
        defer { direct.stop() }
        let environment = ["NO_PROXY": "127.0.0.1"]
        try await withServerProcess(arguments: ["--upstream-proxy", direct.url], environment: environment) {
            server, origin in
            let answer = try await TestHTTP.get(server.proxied(origin.url("/fmp4/index.m3u8")))
            #expect(answer.status == 200)
            #expect(direct.requests.isEmpty, "a NO_PROXY host went through the proxy: \(direct.requests)")
        }
    }
}
