import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// Ranges, HEAD, headers, and hlscache's own pages.
@Suite("Object responses", .sharedMachine)
struct ObjectResponseTests {
    @Test("single ranges a-b, a- and -n are answered 206 on a miss and on a hit; HEAD has the headers only")
    func rangesAndHead() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let url = server.proxied(origin.url("/fmp4/seg1.m4s"))
        let bytes = try #require(origin.file(for: "/fmp4/seg1.m4s"))
        let total = bytes.count

        let middle = try await TestHTTP.get(url, headers: [("Range", "bytes=100-199")])
        #expect(middle.status == 206)
        #expect(middle.body == Array(bytes[100...199]))
        #expect(middle.header("content-range") == "bytes 100-199/\(total)")

        let whole = try await TestHTTP.get(url)
        #expect(whole.status == 200)
        #expect(whole.body == bytes)
        #expect(whole.header("content-type") == "video/mp4")
        try await Task.sleep(for: .milliseconds(200))

        let tail = try await TestHTTP.get(url, headers: [("Range", "bytes=-50")])
        #expect(tail.status == 206)
        #expect(tail.body == Array(bytes[(total - 50)...]))
        #expect(tail.header("x-cache") == "HIT")
        let from = try await TestHTTP.get(url, headers: [("Range", "bytes=1000-")])
        #expect(from.body == Array(bytes[1000...]))
        #expect(from.header("content-range") == "bytes 1000-\(total - 1)/\(total)")
        let inside = try await TestHTTP.get(url, headers: [("Range", "bytes=10-19")])
        #expect(inside.body == Array(bytes[10...19]))
        #expect(inside.header("x-cache") == "HIT")
        let beyond = try await TestHTTP.get(url, headers: [("Range", "bytes=\(total + 10)-")])
        #expect(beyond.status == 416)

        let head = try await TestHTTP.get(url, head: true)
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.header("content-length") == String(total))
        #expect(head.header("cache-control")?.contains("max-age") == true)
        await server.stop()
    }

    @Test("the status page, metrics and health answer")
    func ownRoutes() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1"])
        _ = try await FFmpeg.framemd5(server.proxied(origin.url("/fmp4/index.m3u8")))
        let page = try await TestHTTP.get(server.url("/"))
        #expect(page.status == 200)
        #expect(page.text.contains("hlscache 0."))
        #expect(page.text.contains("Hit ratio"))
        #expect(page.text.contains(origin.url("/fmp4/index.m3u8")))
        let metrics = try await TestHTTP.get(server.url("/metrics")).text
        for name in [
            "hlscache_requests_total", "hlscache_origin_requests_total", "hlscache_origin_bytes_total",
            "hlscache_served_bytes_total", "hlscache_cache_bytes", "hlscache_cache_entries",
            "hlscache_fills_deduplicated_total", "hlscache_request_duration_seconds",
        ] {
            #expect(metrics.contains(name), "\(name) missing")
        }
        #expect(metrics.contains(#"hlscache_requests_total{kind="playlist",cache="miss",protocol="http/1.1"}"#))
        #expect(try await TestHTTP.get(server.url("/healthz")).text == "ok\n")
        await server.stop()
    }
}
