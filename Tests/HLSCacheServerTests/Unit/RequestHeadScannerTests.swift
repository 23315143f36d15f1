import HTTPTypes
import NIOCore
import Testing

@testable import HLSCacheServer

/// ``RequestHeadScanner`` reads the requests the hit path answers from the connection's bytes, and hands everything
/// else to the HTTP/1 decoder: it must never read a head another way than the decoder would.
@Suite("Request head scanner")
struct RequestHeadScannerTests {
    private static func scan(_ text: String) -> RequestHeadScanner.Scan {
        RequestHeadScanner.scan(ByteBuffer(string: text))
    }

    private static let head =
        "GET /o/https/cdn.test/live/index.m3u8?_HLS_msn=5 HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=0-99\r\n"
        + "Via: 1.1 a\r\nvia:1.1 b \r\nOrigin: https://player.test\r\nConnection: keep-alive, Close\r\n"
        + "X-HLSCache-Read-Ahead: 1\r\nAccess-Control-Request-Headers: range\r\nAccept: */*\r\n\r\n"

    @Test("a GET head is read whole: its length, target and the fields the hit path decides on")
    func readsTheFieldsTheHitPathUses() throws {
        guard case .request(let request, let length) = Self.scan(Self.head + "GET /next HTTP/1.1\r\n") else {
            Issue.record("not read")
            return
        }
        #expect(length == Self.head.utf8.count)
        #expect(request.method == .get)
        #expect(request.target == "/o/https/cdn.test/live/index.m3u8?_HLS_msn=5")
        #expect(request.range == "bytes=0-99")
        #expect(request.via == "1.1 a, 1.1 b")
        #expect(request.origin == "https://player.test")
        #expect(request.accessControlRequestHeaders == "range")
        #expect(request.isReadAhead)
        #expect(request.closes)
    }

    @Test("HEAD and OPTIONS are read; a keep-alive request does not close")
    func readsHeadAndOptions() {
        for (method, expected) in [("HEAD", HTTPRequest.Method.head), ("OPTIONS", .options)] {
            guard case .request(let request, _) = Self.scan("\(method) /a HTTP/1.1\r\nHost: h\r\n\r\n") else {
                Issue.record("\(method) not read")
                continue
            }
            #expect(request.method == expected)
            #expect(!request.closes)
        }
    }

    @Test("every prefix of a head is incomplete, never misread")
    func everyPrefixIsIncomplete() {
        let bytes = Array(Self.head.utf8)
        for count in 0..<bytes.count {
            let scan = RequestHeadScanner.scan(ByteBuffer(bytes: bytes[..<count]))
            guard case .incomplete = scan else {
                Issue.record("prefix of \(count) bytes: \(scan)")
                return
            }
        }
    }

    @Test(
        "anything unusual is the decoder's to read",
        arguments: [
            "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
            "GET /a HTTP/1.0\r\nHost: h\r\n\r\n",
            "GET http://h/a HTTP/1.1\r\nHost: h\r\n\r\n",
            "GET * HTTP/1.1\r\n\r\n",
            "GET /a HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
            "GET /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "GET /a HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
            "GET /a HTTP/1.1\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n",
            "GET /a HTTP/1.1\r\nConnection: upgrade\r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: h\r\nHost: i\r\n\r\n",
            "GET /a HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n",
            "GET /a HTTP/1.1\nHost: h\n\n",
            "GET /a HTTP/1.1\r\nHost: h\n\r\n",
            "GET /a HTTP/1.1\r\nHost : h\r\n\r\n",
            "GET /a HTTP/1.1\r\n: h\r\n\r\n",
            "GET /a HTTP/1.1\r\nX-A: a\u{0}b\r\n\r\n",
            "GET /a HTTP/1.1\r\nX-A: a\rb\r\n\r\n",
            "GET /a\u{1}b HTTP/1.1\r\n\r\n",
            "GET  /a HTTP/1.1\r\n\r\n",
            "get /a HTTP/1.1\r\n\r\n",
            "\r\nGET /a HTTP/1.1\r\n\r\n",
        ])
    func unusualHeadsAreHandedOn(_ text: String) {
        guard case .other = Self.scan(text) else {
            Issue.record("read here: \(text.debugDescription)")
            return
        }
    }

    @Test("a head longer than the scanner reads is handed on, complete or not")
    func overlongHeadsAreHandedOn() {
        let field = "X-Long: " + String(repeating: "a", count: RequestHeadScanner.maxHeadLength) + "\r\n"
        guard case .other = Self.scan("GET /a HTTP/1.1\r\n" + field) else {
            Issue.record("an incomplete overlong head was kept")
            return
        }
        guard case .other = Self.scan("GET /a HTTP/1.1\r\n" + field + "\r\n") else {
            Issue.record("a complete overlong head was read")
            return
        }
    }
}
