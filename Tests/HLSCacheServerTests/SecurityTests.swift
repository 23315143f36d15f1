import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// The proxy is not an open relay into private networks.
@Suite("Address policy", .sharedMachine)
struct SecurityTests {
    @Test("the default configuration refuses loopback origins with 403 and sends them nothing")
    func loopbackRefusedByDefault() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start()
        for host in ["127.0.0.1", "localhost"] {
            let answer = try await TestHTTP.get(server.url("/o/http/\(host):\(origin.port)/fmp4/index.m3u8"))
            #expect(answer.status == 403, "\(host): \(answer.text)")
            #expect(answer.text.contains("refused"))
        }
        #expect(origin.total == 0)
        await server.stop()
    }

    @Test("--allow-host 127.0.0.1 (here through HLSCACHE_ALLOW_HOST) lets it through")
    func allowHostOpensIt() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await ServerProcess.start(environment: ["HLSCACHE_ALLOW_HOST": "127.0.0.1"])
        let answer = try await TestHTTP.get(server.proxied(origin.url("/fmp4/index.m3u8")))
        #expect(answer.status == 200)
        #expect(origin.total == 1)
        await server.stop()
    }

    @Test("requests that name no origin, or too long a target, are refused before any traffic")
    func badTargets() async throws {
        let server = try await InProcessServer.start()
        #expect(try await TestHTTP.get(server.url("/o/ftp/example.com/x")).status == 404)
        #expect(try await TestHTTP.get(server.url("/random/path")).status == 404)
        let long = String(repeating: "a", count: 9000)
        #expect(try await TestHTTP.get(server.url("/o/https/example.com/\(long)")).status == 414)
        await server.stop()
    }
}
