import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// HTTP/2 over TLS (ALPN `h2`): each stream an exchange of the same engine, with real clients (nghttp2's `h2load`
/// and `nghttp`) and the attacks on HTTP/2 (rapid reset, CONTINUATION floods, a client that never reads) made with
/// the h2 library (`Tests/Browser/h2_attacks.py`).
@Suite("HTTP/2", .serialized, .sharedMachine)
struct HTTP2Tests {
    /// Runs an attack of `Tests/Browser/h2_attacks.py` and returns its JSON.
    static func attack(_ arguments: [String]) async throws -> [String: Any] {
        try await Browser.prepare()
        let python = Browser.environment.appendingPathComponent("bin/python").path
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/Browser/h2_attacks.py").path
        let result = try await ChildProcess.run(python, [script] + arguments, timeout: 120)
        #expect(result.status == 0, "\(result.errors)")
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
        return object as? [String: Any] ?? [:]
    }

    @Test("h2load: 400 requests on one connection, 100 streams at a time, every one answered 200 from the cache")
    func multiplexedRequests() async throws {
        try await TLSTests.withTLSServer { server, origin, certificates in
            let segment = server.secureURL(TLSTests.path(origin, "/ts-multivariant/hi/seg1.ts"))
            let warm = try await Curl.get(segment, ["--cacert", certificates.caPath])
            #expect(warm.status == 200)
            try await HitPathTests.waitForEntries(1, on: server)
            let run = try await ChildProcess.run("/usr/bin/h2load", ["-n", "400", "-c", "1", "-m", "100", segment])
            #expect(run.status == 0, "\(run.errors)")
            #expect(run.output.contains("400 succeeded"), "\(run.output)")
            #expect(run.output.contains("status codes: 400 2xx"), "\(run.output)")
            #expect(origin.count("/ts-multivariant/hi/seg1.ts") == 1)
            // nghttp: several objects on one connection, playlists rewritten as over HTTP/1.
            let playlist = server.secureURL(TLSTests.path(origin, "/ts-multivariant/hi/index.m3u8"))
            let nghttp = try await ChildProcess.run("/usr/bin/nghttp", ["-n", "-s", playlist, segment, playlist])
            #expect(nghttp.status == 0, "\(nghttp.errors)")
            #expect(nghttp.output.components(separatedBy: " 200 ").count >= 1, "\(nghttp.output)")
            let log = try await server.settledLog()
            #expect(
                log.contains("path=/o/http/127.0.0.1:\(origin.port)/ts-multivariant/hi/index.m3u8 proto=h2 status=200"))
        }
    }

    @Test("a connection's HPACK table keeps the fields that repeat, never the ones each answer changes")
    func hpackTableKeepsRepeatingFields() async throws {
        try await TLSTests.withTLSServer { server, origin, certificates in
            let port = try #require(server.tlsPort)
            let path = TLSTests.path(origin, "/ts-multivariant/hi/seg1.ts")
            #expect(try await Curl.get(server.secureURL(path), ["--cacert", certificates.caPath]).status == 200)
            let result = try await Self.attack(["hpack-table", String(port), path, "4"])
            #expect(result["statuses"] as? [String] == ["200", "200", "200", "200"], "\(result)")
            let table = Set(result["table"] as? [String] ?? [])
            // Entered once and indexed after: the server's name, the type, the CORS fields.
            #expect(table.isSuperset(of: ["server", "content-type", "access-control-allow-origin"]), "\(table)")
            // A new value on every answer (or every object): entered, each would push the others out.
            let changing: Set = [
                "x-request-id", "cmsd-dynamic", "content-length", "etag", "last-modified", "age", "content-range",
            ]
            #expect(table.isDisjoint(with: changing), "\(table)")
        }
    }

    @Test("the rapid-reset flood (CVE-2023-44487) closes the connection; the server goes on serving")
    func rapidReset() async throws {
        try await TLSTests.withTLSServer { server, origin, certificates in
            let port = try #require(server.tlsPort)
            let result = try await Self.attack(["rapid-reset", String(port), "/healthz", "2000"])
            #expect(result["closed"] as? Bool == true, "\(result)")
            #expect((result["sent"] as? Int ?? .max) < 2000, "\(result)")
            #expect(try await Curl.get(server.secureURL("/healthz"), ["--cacert", certificates.caPath]).status == 200)
        }
    }

    @Test("a CONTINUATION flood (CVE-2024-27316 family) closes the connection")
    func continuationFlood() async throws {
        try await TLSTests.withTLSServer { server, origin, certificates in
            let port = try #require(server.tlsPort)
            let result = try await Self.attack(["continuation", String(port), "/healthz", "20000"])
            #expect(result["closed"] as? Bool == true, "\(result)")
            #expect((result["sent"] as? Int ?? .max) < 20000, "\(result)")
            #expect(try await Curl.get(server.secureURL("/healthz"), ["--cacert", certificates.caPath]).status == 200)
        }
    }

    @Test("a malformed request head (RFC 9113 section 8.1.1) gets a 400 on its stream; the connection goes on")
    func malformedHeadsEndTheirStreamOnly() async throws {
        try await TLSTests.withTLSServer { server, origin, certificates in
            let port = try #require(server.tlsPort)
            let path = TLSTests.path(origin, "/ts-multivariant/hi/seg1.ts")
            let result = try await Self.attack(["malformed", String(port), path])
            // Nine malformed heads, each refused alone, then the well-formed one, answered on the same connection.
            #expect(result["statuses"] as? [String] == Array(repeating: "400", count: 9) + ["200"], "\(result)")
            #expect(result["closed"] as? Bool == false, "\(result)")
            #expect(origin.count("/ts-multivariant/hi/seg1.ts") == 1)
            let reasons = result["reasons"] as? [String] ?? []
            #expect(
                reasons
                    == [
                        "a field name that is not a lowercase token", "a connection-specific field",
                        "te other than trailers", "a pseudo-header field after a regular field",
                        "a request without :method, :scheme or :path", "an unknown pseudo-header field",
                        "a pseudo-header field given twice", "a field value with NUL, CR or LF",
                        "a body whose length is not its content-length",
                    ].map { "a malformed HTTP/2 request: \($0)" }, "\(result)")
        }
    }

    @Test("request bodies past the 64 KiB a connection's window starts with are read: the server gives the window back")
    func requestBodiesGiveTheConnectionWindowBack() async throws {
        try await TLSTests.withTLSServer(arguments: ["--admin-token", PurgeTests.token]) { server, _, _ in
            let port = try #require(server.tlsPort)
            // Four forms of 40 KiB with a wrong token: each read whole, then refused.
            let result = try await Self.attack(["bodies", String(port), "/admin/purge", "4"])
            #expect(result["statuses"] as? [String] == ["403", "403", "403", "403"], "\(result)")
        }
    }

    @Test("a client that opens no flow-control window gets the head and no body byte; others are served meanwhile")
    func neverReadingClient() async throws {
        try await TLSTests.withTLSServer { server, origin, certificates in
            let port = try #require(server.tlsPort)
            let large = TLSTests.path(origin, "/large/20000000.ts")
            _ = try await Curl.get(server.secureURL(large), ["--cacert", certificates.caPath])
            async let held = Self.attack(["never-read", String(port), large])
            let meanwhile = try await Curl.get(server.secureURL(large), ["--cacert", certificates.caPath])
            #expect(meanwhile.body.count == 20_000_000)
            let result = try await held
            #expect(result["received"] as? Int == 0, "\(result)")
            #expect((result["status"] as? [String]) == ["200"], "\(result)")
        }
    }

    @Test(
        "SIGTERM's drain: the client is told by a GOAWAY, the HTTP/2 stream in flight is finished, then the connection goes"
    )
    func drainFinishesStreams() async throws {
        let certificates = try await TestCertificates.make()
        let leaf = try await certificates.leaf("server")
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        origin.set("/ts-multivariant/hi/seg2.ts", .delay(.milliseconds(800)))
        let server = try await TLSServerProcess.start(arguments: [
            "--allow-host", "127.0.0.1", "--tls-certificate", leaf.certificatePath, "--tls-key", leaf.keyPath,
        ])
        let url = server.secureURL(TLSTests.path(origin, "/ts-multivariant/hi/seg2.ts"))
        async let answer = Curl.get(url, ["--cacert", certificates.caPath, "--http2", "-v"])
        #expect(try await eventually { origin.count("/ts-multivariant/hi/seg2.ts") == 1 })
        let stop = await server.stop()
        let got = try await answer
        #expect(got.status == 200 && got.httpVersion == "2", "\(got.errors)")
        #expect(got.exitStatus == 0, "\(got.errors)")
        #expect(got.body == origin.file(for: "/ts-multivariant/hi/seg2.ts"))
        // curl's trace of the GOAWAY: no error, naming the stream in flight (curl 7.88 spells it "recveived").
        #expect(got.errors.contains("GOAWAY, error=0, last_stream=1"), "\(got.errors)")
        #expect(stop.status == 0 && stop.seconds < 8, "\(stop)")
    }
}
