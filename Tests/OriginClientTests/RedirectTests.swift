import HLSCacheTesting
import Testing

@testable import OriginClient

/// Redirects are followed by the client itself, every hop checked by the address policy.
@Suite(.timeLimit(.minutes(1))) struct RedirectTests {
    @Test func aChainWithinTheLimitEndsWell() async throws {
        try await StreamOrigin.withRunning { origin in
            let client = try makeClient()
            defer { client.shutdown() }
            let response = try await client.fetch(OriginRequest(url: origin.url("/chain/5")))
            #expect(response.status == 200)
            #expect(response.redirectCount == 5)
            #expect(response.effectiveURL == origin.url("/chain/0"))
            #expect(try await response.body.collect(upTo: 64) == Array("end".utf8))
        }
    }

    @Test func aChainPastTheLimitFails() async throws {
        try await StreamOrigin.withRunning { origin in
            let client = try makeClient()
            defer { client.shutdown() }
            let error = await #expect(throws: OriginError.self) {
                _ = try await client.fetch(OriginRequest(url: origin.url("/chain/6")))
            }
            #expect(error?.kind == .tooManyRedirects)
            #expect(origin.count("/chain/0") == 0)
            #expect(origin.count("/chain/1") == 1)
        }
    }

    @Test func aLoopIsDetected() async throws {
        try await StreamOrigin.withRunning { origin in
            let client = try makeClient()
            defer { client.shutdown() }
            let error = await #expect(throws: OriginError.self) {
                _ = try await client.fetch(OriginRequest(url: origin.url("/loop/a")))
            }
            #expect(error?.kind == .tooManyRedirects)
            #expect(error?.description.contains("redirect loop") == true)
        }
    }

    @Test func aRedirectToLoopbackThroughAWildcardIsRefusedBeforeConnecting() async throws {
        // The target listens on 127.0.0.1 too, but is named `localhost`, which only `*` allows:
        // it resolves to loopback, so the connection must be refused after DNS, before any byte.
        let target = try RawOrigin { _, connection in
            connection.readRequest()
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nleaked")
        }
        defer { target.stop() }
        try await StreamOrigin.withRunning { origin in
            let client = try makeClient(allowedHosts: ["127.0.0.1", "*"])
            defer { client.shutdown() }
            let error = await #expect(throws: OriginError.self) {
                _ = try await client.fetch(OriginRequest(url: origin.url("/to-localhost/\(target.port)")))
            }
            #expect(error?.kind == .refused)
            #expect(error?.url == "http://localhost:\(target.port)/x")
            #expect(target.connectionCount == 0)
        }
    }

    @Test(arguments: ["/to-metadata", "/to-file"])
    func aRedirectToARefusedTargetFails(path: String) async throws {
        try await StreamOrigin.withRunning { origin in
            let client = try makeClient(allowedHosts: ["127.0.0.1", "*"])
            defer { client.shutdown() }
            let error = await #expect(throws: OriginError.self) {
                _ = try await client.fetch(OriginRequest(url: origin.url(path)))
            }
            #expect(error?.kind == .refused)
        }
    }

    @Test func aRedirectToAnUnlistedHostIsRefused() async throws {
        try await StreamOrigin.withRunning { origin in
            let client = try makeClient(allowedHosts: ["127.0.0.1"])
            defer { client.shutdown() }
            let error = await #expect(throws: OriginError.self) {
                _ = try await client.fetch(OriginRequest(url: origin.url("/to-localhost/9")))
            }
            #expect(error?.kind == .refused)
            #expect(error?.description.contains("not in the allowed hosts") == true)
        }
    }

    @Test func credentialsAreNotSentToAnotherOrigin() async throws {
        try await StreamOrigin.withRunning { first in
            try await StreamOrigin.withRunning { second in
                let client = try makeClient {
                    $0.extraHeaders = [("Authorization", "Bearer t"), ("Cookie", "c=1"), ("X-Token", "kept")]
                }
                defer { client.shutdown() }
                let response = try await client.fetch(OriginRequest(url: first.url("/to-other/\(second.port)")))
                #expect(response.effectiveURL == second.url("/headers"))
                let text = String(decoding: try await response.body.collect(upTo: 65536), as: UTF8.self).lowercased()
                #expect(!text.contains("authorization"))
                #expect(!text.contains("cookie"))
                #expect(text.contains("x-token: kept"))
            }
        }
    }
}
