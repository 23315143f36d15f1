import HTTPTypes
import Hummingbird
import NIOCore

/// The well-behaved origin of the tests: a Hummingbird 2 application on 127.0.0.1, on a port the system chose.
///
/// Routes:
/// - `GET /bytes/{size}`: `size` bytes of ``TestOrigin/pattern``, with a Content-Length;
/// - `GET /status/{code}`: that status, with a short body;
/// - `GET /flaky/{key}`: 503 the first time a key is asked for, 200 `recovered` afterwards;
/// - `GET /chain/{n}`: a 302 to `/chain/{n-1}`, and 200 `end` at 0;
/// - `GET /loop/a`, `/loop/b`: 302s to each other;
/// - `GET /to-localhost/{port}`, `/to-metadata`, `/to-file`, `/to-other/{port}`: a 302 to
///   `http://localhost:{port}/x`, `http://169.254.169.254/latest/meta-data/`, `file:///etc/passwd`,
///   `http://127.0.0.1:{port}/headers`;
/// - `GET /headers`: the request headers, one `name: value` line each;
/// - `GET /gzip`: `hello, gzip\n`, gzip-encoded.
struct TestOrigin: Sendable {
    /// The port the origin listens on.
    let port: Int
    /// What the origin saw.
    let log: OriginLog

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The byte at `offset` of every `/bytes` body: a period of 251 does not line up with any chunk size.
    static func patternByte(at offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: (offset &* 7) % 251) }

    /// 16 MiB of the pattern, sliced by `/bytes`.
    static let pattern: [UInt8] = (0..<(16 << 20)).map(patternByte(at:))

    /// `hello, gzip\n`, gzip-compressed.
    static let gzipHello: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0xd7,
        0x51, 0x48, 0xaf, 0xca, 0x2c, 0xe0, 0x02, 0x00, 0x86, 0x1f, 0x82, 0xa4, 0x0c, 0x00, 0x00, 0x00,
    ]

    /// Runs `body` with an origin listening, and stops it afterwards.
    static func withRunning<T: Sendable>(_ body: @Sendable (TestOrigin) async throws -> T) async throws -> T {
        let log = OriginLog()
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: makeRouter(log: log),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                portContinuation.yield(channel.localAddress?.port ?? 0)
                portContinuation.finish()
            }
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await app.run()
            }
            defer { group.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                throw TestOriginError.didNotStart
            }
            return try await body(TestOrigin(port: port, log: log))
        }
    }

    private static func makeRouter(log: OriginLog) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/bytes/:size") { _, context -> Response in
            let size = min(context.parameters.get("size", as: Int.self) ?? 0, pattern.count)
            return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(bytes: pattern[0..<size])))
        }
        router.get("/status/:code") { _, context -> Response in
            let code = context.parameters.get("code", as: Int.self) ?? 500
            log.record("/status/\(code)")
            return text("status \(code)", status: HTTPResponse.Status(code: code))
        }
        router.get("/flaky/:key") { _, context -> Response in
            let key = context.parameters.get("key") ?? ""
            return log.record("/flaky/\(key)") == 1 ? text("try again", status: .serviceUnavailable) : text("recovered")
        }
        router.get("/chain/:n") { _, context -> Response in
            let n = context.parameters.get("n", as: Int.self) ?? 0
            log.record("/chain/\(n)")
            return n > 0 ? redirect(to: "/chain/\(n - 1)") : text("end")
        }
        router.get("/loop/a") { _, _ in redirect(to: "/loop/b") }
        router.get("/loop/b") { _, _ in redirect(to: "/loop/a") }
        router.get("/to-localhost/:port") { _, context -> Response in
            redirect(to: "http://localhost:\(context.parameters.get("port") ?? "1")/x")
        }
        router.get("/to-metadata") { _, _ in redirect(to: "http://169.254.169.254/latest/meta-data/") }
        router.get("/to-file") { _, _ in redirect(to: "file:///etc/passwd") }
        router.get("/to-other/:port") { _, context -> Response in
            redirect(to: "http://127.0.0.1:\(context.parameters.get("port") ?? "1")/headers")
        }
        router.get("/headers") { request, _ -> Response in
            let lines = request.headers.map { "\($0.name.canonicalName): \($0.value)\n" }
            return text(lines.joined())
        }
        router.get("/gzip") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentEncoding: "gzip", .contentType: "application/vnd.apple.mpegurl"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: gzipHello))
            )
        }
        return router
    }

    private static func text(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    private static func redirect(to location: String) -> Response {
        Response(status: .found, headers: [.location: location])
    }
}

/// The test origin did not report its port.
enum TestOriginError: Error {
    case didNotStart
}
