import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

@testable import HLSCacheServer

/// No query token or URL password reaches the status page or a log line.
@Suite("Secrets", .sharedMachine)
struct SecretsTests {
    @Test(
        "query values and userinfo are masked; names, paths and LL-HLS parameters stay",
        arguments: [
            ("/o/https/cdn/a.ts?token=abc&sig=def", "/o/https/cdn/a.ts?token=***&sig=***"),
            ("https://user:pw@cdn.example/a.m3u8?x=1#frag", "https://***@cdn.example/a.m3u8?x=***#frag"),
            ("/o/http/user:pw@host:8080/a.ts", "/o/http/***@host:8080/a.ts"),
            ("/live.m3u8?_HLS_msn=5&_HLS_part=2&token=t", "/live.m3u8?_HLS_msn=5&_HLS_part=2&token=***"),
            (
                "origin answered 404 for https://cdn/x?secret (line 3)",
                "origin answered 404 for https://cdn/x?*** (line 3)"
            ),
            ("why? because", "why? because"),
            ("no secrets here", "no secrets here"),
            ("mail me@example.com", "mail me@example.com"),
        ])
    func redaction(input: String, expected: String) {
        #expect(SecretRedaction.redact(input) == expected)
    }

    @Test("after requests with tokens and a password, neither the status page nor the log shows them")
    func statusPageAndLogsHoldNoSecrets() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: HardeningTests.loopback)
        let playlist = server.proxied(origin.url("/fmp4/index.m3u8")) + "?token=SECRET-TOKEN-1&sig=SECRET-SIG-2"
        #expect(try await TestHTTP.get(playlist).status == 200)
        let segment = server.proxied(origin.url("/fmp4/seg0.m4s")) + "?token=SECRET-TOKEN-3"
        #expect(try await TestHTTP.get(segment).status == 200)
        let missing = server.proxied(origin.url("/nothing.ts")) + "?token=SECRET-TOKEN-4"
        #expect(try await TestHTTP.get(missing).status == 404)
        let withPassword = server.url("/o/http/someone:SECRET-PASSWORD-5@127.0.0.1:\(origin.port)/fmp4/seg1.m4s")
        let refused = try await TestHTTP.get(withPassword)
        #expect(refused.status == 400)
        #expect(refused.text.contains("credentials in an origin URL are refused"))
        #expect(origin.count("/fmp4/seg1.m4s") == 0)
        let page = try await TestHTTP.get(server.url("/")).text
        #expect(page.contains("/fmp4/index.m3u8?token=***&amp;sig=***"), "\(page)")
        let log = try await server.settledLog()
        #expect(log.contains("path=/o/http/***@127.0.0.1"), "\(log)")
        for secret in ["SECRET-TOKEN-1", "SECRET-SIG-2", "SECRET-TOKEN-3", "SECRET-TOKEN-4", "SECRET-PASSWORD-5"] {
            #expect(!page.contains(secret), "\(secret) on the status page")
            #expect(!log.contains(secret), "\(secret) in the log")
        }
        await server.stop()
    }
}

/// The connection cap is sized from the open-file limit.
@Suite("Open-file limit", .sharedMachine)
struct OpenFileLimitTests {
    @Test("the connection cap leaves a quarter of the descriptors (at least 32) for files and origins")
    func connectionLimit() {
        #expect(OpenFileLimit.connectionLimit(openFiles: 256, requested: 4096) == 128)
        #expect(OpenFileLimit.connectionLimit(openFiles: 1_048_576, requested: 4096) == 4096)
        #expect(OpenFileLimit.connectionLimit(openFiles: 20, requested: 4096) == 1)
    }
}
