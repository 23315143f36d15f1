import Foundation
import Glibc
import HLSCacheTestTraits
import HLSCacheTesting
import Logging
import Testing

@testable import HLSCacheServer

/// HTTPS beside cleartext HTTP: the same answers over TLS to real clients (curl, ffmpeg), only TLS 1.2 and 1.3,
/// plain HTTP on the TLS port refused, a handshake that never ends closed, and the pair loaded again on SIGHUP
/// without a restart (a pair that does not load keeps the old one).
@Suite("HTTPS", .serialized, .sharedMachine)
struct TLSTests {
    /// A server with HTTPS on a free port, its certificates, and an origin.
    static func withTLSServer<T: Sendable>(
        arguments: [String] = [],
        _ body: (TLSServerProcess, StreamOrigin, TestCertificates) async throws -> T
    ) async throws -> T {
        let certificates = try await TestCertificates.make()
        let leaf = try await certificates.leaf("server")
        return try await withServerAndOrigin(
            start: { _ in
                try await TLSServerProcess.start(
                    arguments: [
                        "--allow-host", "127.0.0.1", "--tls-certificate", leaf.certificatePath, "--tls-key",
                        leaf.keyPath,
                    ] + arguments)
            }, { server, origin in try await body(server, origin, certificates) })
    }

    /// The proxied path of an origin path, in the forward form.
    static func path(_ origin: StreamOrigin, _ path: String) -> String {
        "/o/http/127.0.0.1:\(origin.port)\(path)"
    }

    @Test(
        "curl gets over HTTPS, HTTP/1.1 and HTTP/2, what it gets over HTTP: playlists, a miss then its hit, a range, a large object",
        arguments: [("--http1.1", "1.1"), ("--http2", "2")])
    func sameAnswersOverHTTPS(option: String, version: String) async throws {
        try await Self.withTLSServer { server, origin, certificates in
            let trust = ["--cacert", certificates.caPath, option]
            let playlist = Self.path(origin, "/ts-multivariant/hi/index.m3u8")
            let secure = try await Curl.get(server.secureURL(playlist), trust)
            #expect(secure.status == 200 && secure.httpVersion == version, "\(secure.errors)")
            let plain = try await Curl.get(server.url(playlist))
            #expect(secure.body == plain.body && !secure.body.isEmpty)
            // A segment: the miss streams as it arrives, the hit is a file the TLS layer reads.
            let segment = Self.path(origin, "/ts-multivariant/hi/seg1.ts")
            let expected = try #require(origin.file(for: "/ts-multivariant/hi/seg1.ts"))
            let miss = try await Curl.get(server.secureURL(segment), trust)
            // The entry is published just after the miss's last byte: until then a request joins the fill (MISS).
            var hit = try await Curl.get(server.secureURL(segment), trust)
            for _ in 0..<40 where hit.headers["x-cache"] != "HIT" {
                #expect(hit.body == expected)
                try await Task.sleep(for: .milliseconds(50))
                hit = try await Curl.get(server.secureURL(segment), trust)
            }
            #expect(miss.body == expected && hit.body == expected)
            #expect(hit.headers["x-cache"] == "HIT")
            let range = try await Curl.get(server.secureURL(segment), trust + ["-r", "100-1099"])
            #expect(range.status == 206 && range.body == Array(expected[100..<1100]))
            // Larger than the TLS layer's chunks and the write buffer: read from the file as the client takes it.
            let large = Self.path(origin, "/large/5000000.ts")
            _ = try await Curl.get(server.secureURL(large), trust)
            // Published once its body is whole: a busy machine may take a moment.
            var largeHit = try await Curl.get(server.secureURL(large), trust)
            for _ in 0..<50 where largeHit.headers["x-cache"] != "HIT" {
                try await Task.sleep(for: .milliseconds(100))
                largeHit = try await Curl.get(server.secureURL(large), trust)
            }
            #expect(largeHit.headers["x-cache"] == "HIT")
            #expect(largeHit.body == StreamOrigin.pattern(count: 5_000_000))
            // The status page and the metrics too.
            #expect(try await Curl.get(server.secureURL("/"), trust).status == 200)
        }
    }

    @Test(
        "ffmpeg plays TS, fMP4, AES-128 and DASH over HTTPS with the origin's packets (the test CA verified)",
        arguments: [
            "ts-multivariant/master.m3u8", "fmp4/index.m3u8", "aes128/index.m3u8", "dash-timeline/manifest.mpd",
        ])
    func ffmpegOverHTTPS(stream: String) async throws {
        try await Self.withTLSServer(arguments: ["--read-ahead", "0"]) { server, origin, certificates in
            let direct = try await FFmpeg.framemd5(origin.url("/" + stream))
            #expect(direct.status == 0, "ffmpeg on the origin: \(direct.errors)")
            let secure = try await FFmpeg.framemd5(
                server.secureURL(Self.path(origin, "/" + stream)),
                extraArguments: ["-tls_verify", "1", "-ca_file", certificates.caPath])
            #expect(secure.status == 0, "ffmpeg over HTTPS: \(secure.errors)")
            #expect(secure.output == direct.output && secure.output.split(separator: "\n").count > 20)
        }
    }

    @Test(
        "GStreamer plays TS, fMP4 and AES-128 over HTTPS, every video frame, verifying the test CA; refuses it untrusted"
    )
    func gstreamerOverHTTPS() async throws {
        try await Self.withTLSServer(arguments: ["--read-ahead", "0"]) { server, origin, certificates in
            for stream in ["ts-multivariant/hi/index.m3u8", "fmp4/index.m3u8", "aes128/index.m3u8"] {
                let uri = server.secureURL(Self.path(origin, "/" + stream))
                var (frames, run) = try await GStreamer.videoFrames(uri, trusting: certificates.caPath, timeout: 60)
                // A request still open when the player was killed is logged as aborted once the connection closes.
                if run.status == -1 { try await Task.sleep(for: .seconds(1)) }
                let folder = "/" + stream.prefix { $0 != "/" } + "/"
                let served = server.log.split(separator: "\n").filter { $0.contains(" path=") && $0.contains(folder) }
                if run.status == -1, !served.isEmpty,
                    served.allSatisfy({ $0.contains(" status=200") && !$0.contains("error=") })
                {
                    // gst-launch 1.22 hung mid-play once in CI (3 frames, then nothing for two minutes); the same
                    // HTTP/2 misses, 1,500 of them through h2load under load, never stalled here. When hlscache's log
                    // shows every answer of the stream whole, the hang is the player's: one more play, as strict.
                    print(
                        "GStreamer hung on \(stream) after \(frames) frames; hlscache served:\n"
                            + served.joined(separator: "\n"))
                    (frames, run) = try await GStreamer.videoFrames(uri, trusting: certificates.caPath, timeout: 60)
                }
                #expect(run.status == 0, "\(stream): \(run.errors)\n\(served.joined(separator: "\n"))")
                #expect(frames == 60, "\(stream): \(frames) frames over HTTPS (6 s at 10 fps)")
            }
            // Without the test CA, the player refuses the certificate: nothing is played.
            let uri = server.secureURL(Self.path(origin, "/fmp4/index.m3u8"))
            let (frames, run) = try await GStreamer.videoFrames(uri)
            #expect(run.status != 0 && frames == 0, "\(run.status) \(frames)")
        }
    }

    @Test("only TLS 1.2 and 1.3 are spoken; the certificate is the configured one")
    func tlsVersions() async throws {
        try await Self.withTLSServer { server, origin, certificates in
            let trust = ["--cacert", certificates.caPath]
            let url = server.secureURL("/healthz")
            #expect(try await Curl.get(url, trust + ["--tlsv1.3"]).status == 200)
            #expect(try await Curl.get(url, trust + ["--tlsv1.2", "--tls-max", "1.2"]).status == 200)
            let old = try await Curl.get(url, trust + ["--tlsv1.0", "--tls-max", "1.1"])
            #expect(old.status == 0 && old.exitStatus != 0)
            // Without the test CA, curl refuses the certificate: it is not some default one.
            let untrusted = try await Curl.get(url)
            #expect(untrusted.exitStatus == 60, "\(untrusted.errors)")
        }
    }

    @Test("plain HTTP sent to the TLS port is closed at once and logged once per client")
    func plaintextOnTLSPort() async throws {
        // A long grace: a stop held up by an idle connection would take all of it.
        try await Self.withTLSServer(arguments: ["--shutdown-grace", "30"]) { server, origin, _ in
            let port = try #require(server.tlsPort)
            for _ in 0..<3 {
                let answer = try await Curl.get("http://127.0.0.1:\(port)/healthz")
                #expect(answer.status == 0 && answer.exitStatus == 52, "\(answer.errors)")
            }
            let log = try await server.settledLog()
            #expect(log.components(separatedBy: "plain HTTP sent to the TLS port").count == 2, "\(log)")
            // The cleartext port still serves, and an idle connection to it does not hold the stop up.
            #expect(try await TestHTTP.get(server.url("/healthz")).status == 200)
            let stop = await server.stop()
            #expect(stop.status == 0 && stop.seconds < 20, "\(stop): \(server.log.suffix(3000))")
        }
    }

    @Test("a TLS handshake that never finishes is closed by the request-head clock")
    func stalledHandshake() async throws {
        try await Self.withTLSServer(arguments: ["--request-head-timeout", "1"]) { server, origin, _ in
            let port = try #require(server.tlsPort)
            let closedAfter = try await offPool { () -> TimeInterval in
                let connection = try RawConnection(port: port)
                defer { connection.close() }
                let start = Date()
                // Half a ClientHello's record header, then nothing.
                _ = connection.send([0x16, 0x03, 0x01])
                #expect(connection.waitForPeerClose(timeout: .seconds(10)))
                return Date().timeIntervalSince(start)
            }
            #expect(closedAfter > 0.5 && closedAfter < 5, "\(closedAfter)")
            // A connection whose handshake completed is not: it goes on past that clock, idle between requests.
            let result = try await HTTP2Tests.attack(["keepalive", String(port), "/healthz", "2"])
            #expect(
                (result["statuses"] as? [String]) == ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"], "\(result)")
        }
    }

    @Test("with --port none only HTTPS is served")
    func tlsOnly() async throws {
        let certificates = try await TestCertificates.make()
        let leaf = try await certificates.leaf("server")
        let server = try await InProcessServer.start(arguments: [
            "--port", "none", "--tls-certificate", leaf.certificatePath, "--tls-key", leaf.keyPath, "--tls-port", "0",
        ])
        let answer = try await Curl.get(server.secureURL("/healthz"), ["--cacert", certificates.caPath])
        #expect(answer.status == 200)
        #expect(server.port == server.tlsPort)
        await server.stop()
    }

    @Test("a certificate that does not load stops the start with the reason: expired, a key of another certificate")
    func badPairAtStart() async throws {
        let certificates = try await TestCertificates.make()
        let expired = try await certificates.leaf("expired", days: -1)
        let good = try await certificates.leaf("good")
        let stray = try await certificates.strayKey("stray")
        for (certificate, key, reason) in [
            (expired.certificatePath, expired.keyPath, "expired"), (good.certificatePath, stray, "does the key match"),
            (good.certificatePath + ".missing", good.keyPath, "not a readable PEM certificate"),
        ] {
            await #expect {
                _ = try await InProcessServer.start(arguments: [
                    "--tls-certificate", certificate, "--tls-key", key, "--tls-port", "0",
                ])
            } throws: { error in
                "\(error)".contains(reason)
            }
        }
    }
    @Test("an https parent: the edge verifies its certificate with --parent-ca, and without that CA refuses it")
    func httpsParent() async throws {
        try await Self.withTLSServer(arguments: ["--node-name", "shield"]) { parent, origin, certificates in
            let base = parent.secureURL("/")
            let edge = try await InProcessServer.start(arguments: [
                "--parent", base, "--parent-ca", certificates.caPath, "--node-name", "edge1",
            ])
            let miss = try await TestHTTP.get(edge.proxied(origin.url("/ts-multivariant/hi/seg1.ts")))
            #expect(miss.status == 200 && miss.header("x-cache-parent") == "MISS", "\(miss.status) \(miss.text)")
            #expect(miss.body == origin.file(for: "/ts-multivariant/hi/seg1.ts"))
            await edge.stop()
            // The system's CAs do not know the test's: the parent is not trusted, and nothing is fetched around it.
            let untrusting = try await InProcessServer.start(arguments: ["--parent", base, "--node-name", "edge2"])
            let refused = try await TestHTTP.get(untrusting.proxied(origin.url("/ts-multivariant/hi/seg2.ts")))
            #expect(refused.status == 502, "\(refused.status)")
            #expect(origin.count("/ts-multivariant/hi/seg2.ts") == 0)
            let log = try await untrusting.settledLog()
            #expect(log.lowercased().contains("certificate"), "\(log.suffix(2000))")
            await untrusting.stop()
        }
    }
}

/// HTTPS clients that stop reading: what they cost, and the stop they do not hold up.
@Suite("HTTPS clients that stop reading", .serialized, .sharedMachine)
struct TLSStalledClientTests {
    @Test(
        "three HTTPS clients stalled on a cached 40 MB object cost the server no copy of it, and SIGTERM still ends it cleanly"
    )
    func stalledClients() async throws {
        let certificates = try await TestCertificates.make()
        let leaf = try await certificates.leaf("server")
        // The object from an origin in a process of its own: megabytes made in the test process would hold up the
        // other suites' servers on its shared event loops.
        let folder = ServerProcess.temporaryDirectory()
        _ = FileManager.default.createFile(
            atPath: folder + "/big.ts", contents: Data(StreamOrigin.pattern(count: 40_000_000)))
        let originPort = try freeLoopbackPort()
        let origin = try ChildProcess(
            "/usr/bin/python3", ["-m", "http.server", String(originPort), "--bind", "127.0.0.1", "-d", folder],
            environment: nil)
        defer {
            origin.send(SIGTERM)
            origin.waitForExit(timeout: 5)
        }
        let tlsPort = try freeLoopbackPort()
        let server = try await ServerProcess.start(arguments: [
            "--allow-host", "127.0.0.1", "--tls-certificate", leaf.certificatePath, "--tls-key", leaf.keyPath,
            "--tls-port", String(tlsPort), "--shutdown-grace", "2",
        ])
        defer { server.terminate() }
        let path = "/o/http/127.0.0.1:\(originPort)/big.ts"
        var filled = try await Curl.get(server.url(path))
        for _ in 0..<50 where filled.status != 200 {
            // The origin may not listen yet.
            try await Task.sleep(for: .milliseconds(100))
            filled = try await Curl.get(server.url(path))
        }
        #expect(filled.body.count == 40_000_000)
        try await HitPathTests.waitForEntries(1, on: server)
        let before = server.peakMemory
        try await Browser.prepare()
        let python = Browser.environment.appendingPathComponent("bin/python").path
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/Browser/h2_attacks.py").path
        async let stalled = ChildProcess.run(python, [script, "stall", String(tlsPort), path, "3", "6"], timeout: 60)
        try await Task.sleep(for: .seconds(3))
        let grown = server.peakMemory - before
        // The hit is read from its file as each client takes it: a few buffers each, not the object.
        #expect(grown < 30_000_000, "the server's peak memory grew by \(grown) bytes")
        // SIGTERM with the three still stalled: cut after the grace, a clean exit.
        let stop = await server.stop()
        #expect(stop.status == 0 && stop.seconds < 10, "\(stop)")
        let run = try await stalled
        #expect(run.output.contains("\"answered\": 3"), "\(run.output) \(run.errors)")
    }
}

/// The certificate and key loaded again without a restart, as an ACME renewal does it.
@Suite("HTTPS certificate reload", .sharedMachine)
struct TLSReloadTests {
    /// The subject curl sees in the server's certificate.
    static func subject(port: Int, ca: String) async throws -> String {
        let answer = try await Curl.get("https://127.0.0.1:\(port)/healthz", ["--cacert", ca, "-v"])
        let line = answer.errors.split(separator: "\n").first { $0.contains("subject:") }
        return line.map(String.init) ?? "no certificate (\(answer.errors.suffix(300)))"
    }

    /// Puts `certificate` and `key` at the paths the server reads, as a renewal does: new files renamed over the old.
    static func install(certificate: String, key: String, at live: (certificate: String, key: String)) throws {
        for (source, target) in [(certificate, live.certificate), (key, live.key)] {
            let temporary = target + ".new"
            try? FileManager.default.removeItem(atPath: temporary)
            try FileManager.default.copyItem(atPath: source, toPath: temporary)
            guard rename(temporary, target) == 0 else { throw POSIXError(.EIO) }
        }
    }

    @Test("SIGHUP loads the new pair for new handshakes; a pair that does not load keeps the old one and says why")
    func sighupReloads() async throws {
        let certificates = try await TestCertificates.make()
        let first = try await certificates.leaf("first", commonName: "first")
        let second = try await certificates.leaf("second", commonName: "second")
        let expired = try await certificates.leaf("expired", commonName: "expired", days: -1)
        let stray = try await certificates.strayKey("stray")
        let live = (certificate: certificates.directory + "/live.pem", key: certificates.directory + "/live.key")
        try Self.install(certificate: first.certificatePath, key: first.keyPath, at: live)
        let tlsPort = try freeLoopbackPort()
        let server = try await ServerProcess.start(arguments: [
            "--tls-certificate", live.certificate, "--tls-key", live.key, "--tls-port", String(tlsPort),
        ])
        defer { server.terminate() }
        #expect(try await Self.subject(port: tlsPort, ca: certificates.caPath).contains("CN=first"))

        try Self.install(certificate: second.certificatePath, key: second.keyPath, at: live)
        kill(server.process.processIdentifier, SIGHUP)
        #expect(try await eventually { server.log.contains("TLS certificate loaded") })
        #expect(try await Self.subject(port: tlsPort, ca: certificates.caPath).contains("CN=second"))

        // A key of no certificate here, then an expired certificate: each refused, the second pair kept.
        for (certificate, key, reason) in [
            (second.certificatePath, stray, "does the key match"),
            (expired.certificatePath, expired.keyPath, "expired"),
        ] {
            try Self.install(certificate: certificate, key: key, at: live)
            kill(server.process.processIdentifier, SIGHUP)
            #expect(
                try await eventually {
                    server.log.components(separatedBy: "TLS certificate not reloaded").count > 1
                        && server.log.contains(reason)
                }, "\(server.log.suffix(2000))")
            #expect(try await Self.subject(port: tlsPort, ca: certificates.caPath).contains("CN=second"))
        }
        #expect(server.terminate().status == 0)
    }

    @Test("the periodic check loads a pair whose files changed, and only then")
    func changedFilesReload() async throws {
        let certificates = try await TestCertificates.make()
        let first = try await certificates.leaf("first", commonName: "first")
        let second = try await certificates.leaf("second", commonName: "second")
        let live = (certificate: certificates.directory + "/live.pem", key: certificates.directory + "/live.key")
        try Self.install(certificate: first.certificatePath, key: first.keyPath, at: live)
        let loaded = try TLSCertificates(certificatePath: live.certificate, keyPath: live.key)
        let logger = Logger(label: "test")
        #expect(!loaded.reload(force: false, logger: logger))
        let before = loaded.notValidAfter
        try Self.install(certificate: second.certificatePath, key: second.keyPath, at: live)
        #expect(loaded.reload(force: false, logger: logger))
        #expect(!loaded.reload(force: false, logger: logger))
        #expect(loaded.notValidAfter >= before)
        // A pair that does not load is tried once per change, not at every check.
        try "not a certificate".write(toFile: live.certificate, atomically: true, encoding: .utf8)
        #expect(!loaded.reload(force: false, logger: logger))
        #expect(!loaded.reload(force: false, logger: logger))
    }
}
