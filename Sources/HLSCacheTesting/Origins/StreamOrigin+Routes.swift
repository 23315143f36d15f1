import HTTPTypes
import Hummingbird
import NIOCore

extension StreamOrigin {
    /// The byte at `offset` of every `/bytes` body: a period of 251 does not line up with any chunk size.
    public static func patternByte(at offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: (offset &* 7) % 251) }

    /// How often ``patternByte(at:)`` repeats.
    public static let patternPeriod = 251

    /// 16 MiB of ``patternByte(at:)``, sliced by `/bytes`.
    public static let bytesPattern: [UInt8] = TestBytes.repeating(
        (0..<patternPeriod).map(patternByte(at:)), count: 16 << 20)

    /// `hello, gzip\n`, gzip-compressed: the body of `/gzip`.
    public static let gzipHello: [UInt8] = [
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0xd7,
        0x51, 0x48, 0xaf, 0xca, 0x2c, 0xe0, 0x02, 0x00, 0x86, 0x1f, 0x82, 0xa4, 0x0c, 0x00, 0x00, 0x00,
    ]

    /// The answers of the origin client's tests:
    /// - `GET /bytes/{size}`: `size` bytes of ``bytesPattern``, with a Content-Length;
    /// - `GET /status/{code}`: that status, with a short body;
    /// - `GET /flaky/{key}`: 503 the first time a key is asked for, 200 `recovered` afterwards;
    /// - `GET /chain/{n}`: a 302 to `/chain/{n-1}`, and 200 `end` at 0;
    /// - `GET /loop/a`, `/loop/b`: 302s to each other;
    /// - `GET /to-localhost/{port}`, `/to-metadata`, `/to-file`, `/to-other/{port}`: a 302 to
    ///   `http://localhost:{port}/x`, `http://169.254.169.254/latest/meta-data/`, `file:///etc/passwd`,
    ///   `http://127.0.0.1:{port}/headers`;
    /// - `GET /headers`: the request headers, one `name: value` line each;
    /// - `GET /gzip`: `hello, gzip\n`, gzip-encoded.
    /// - Parameter seen: how many times the path has been asked for, this request included.
    /// - Returns: `nil` for every other path.
    func route(_ request: Request, seen: Int) -> Response? {
        let parts = request.uri.path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        switch (parts.first, parts.count) {
        case ("bytes", 2):
            let size = min(Int(parts[1]) ?? 0, Self.bytesPattern.count)
            return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(bytes: Self.bytesPattern[0..<size])))
        case ("status", 2):
            let code = Int(parts[1]) ?? 500
            return Self.text("status \(code)", status: HTTPResponse.Status(code: code))
        case ("flaky", 2):
            return seen == 1 ? Self.text("try again", status: .serviceUnavailable) : Self.text("recovered")
        case ("chain", 2):
            let n = Int(parts[1]) ?? 0
            return n > 0 ? Self.redirect(to: "/chain/\(n - 1)") : Self.text("end")
        case ("moved", let count) where count >= 2:
            // `/moved/<path>`: 302 to `/<path>`, with the query (a manifest whose references resolve from there).
            let query = request.uri.query.map { "?" + $0 } ?? ""
            return Self.redirect(to: "/" + parts.dropFirst().joined(separator: "/") + query)
        case ("loop", 2):
            return Self.redirect(to: parts[1] == "a" ? "/loop/b" : "/loop/a")
        case ("to-localhost", 2):
            return Self.redirect(to: "http://localhost:\(parts[1])/x")
        case ("to-metadata", 1):
            return Self.redirect(to: "http://169.254.169.254/latest/meta-data/")
        case ("to-file", 1):
            return Self.redirect(to: "file:///etc/passwd")
        case ("to-other", 2):
            return Self.redirect(to: "http://127.0.0.1:\(parts[1])/headers")
        case ("headers", 1):
            return Self.text(request.headers.map { "\($0.name.canonicalName): \($0.value)\n" }.joined())
        case ("gzip", 1):
            return Response(
                status: .ok, headers: [.contentEncoding: "gzip", .contentType: "application/vnd.apple.mpegurl"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: Self.gzipHello)))
        default:
            return nil
        }
    }

    private static func text(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }

    private static func redirect(to location: String) -> Response {
        Response(status: .found, headers: [.location: location])
    }
}
