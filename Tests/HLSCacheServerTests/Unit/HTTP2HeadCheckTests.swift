import HLSCacheTestTraits
import HTTPTypes
import RequestHeads
import Testing

/// An HTTP/2 request's header block is checked where it is read (`DecodedHead(http2:)`), not by the framing layer:
/// each malformed block (RFC 9113 sections 8.2 and 8.3) is a 400 with its reason; a well-formed one is a request.
@Suite("HTTP/2 request heads", .sharedMachine)
struct HTTP2HeadCheckTests {
    private static let base: [(name: String, value: String)] = [
        (":method", "GET"), (":scheme", "https"), (":path", "/o/https/cdn.test/a.ts"), (":authority", "edge"),
    ]

    private static func decoded(_ fields: [(name: String, value: String)]) -> DecodedHead {
        DecodedHead(http2: fields)
    }

    @Test("a well-formed head is a request, with its fields read")
    func wellFormedHeadIsARequest() throws {
        let head = Self.decoded(
            Self.base + [("range", "bytes=0-99"), ("te", "trailers"), ("x-anything_ok.~", "a value\twith tab")])
        guard case .request(let request) = head else {
            Issue.record("refused: \(head)")
            return
        }
        #expect(request.target == "/o/https/cdn.test/a.ts")
        #expect(request.range == "bytes=0-99")
        #expect(request.isHTTP2)
    }

    @Test(
        "each malformed head is refused with 400 and says why",
        arguments: [
            (Self.base + [("Range", "bytes=0-1")], "a field name that is not a lowercase token"),
            (Self.base + [("", "x")], "an empty field name"),
            (Self.base + [("x y", "x")], "a field name that is not a lowercase token"),
            (Self.base + [("connection", "close")], "a connection-specific field"),
            (Self.base + [("keep-alive", "5")], "a connection-specific field"),
            (Self.base + [("proxy-connection", "x")], "a connection-specific field"),
            (Self.base + [("transfer-encoding", "chunked")], "a connection-specific field"),
            (Self.base + [("upgrade", "h2c")], "a connection-specific field"),
            (Self.base + [("te", "gzip")], "te other than trailers"),
            (
                [(":method", "GET"), ("accept", "*/*"), (":scheme", "https"), (":path", "/")],
                "a pseudo-header field after a regular field"
            ),
            (Self.base + [(":status", "200")], "an unknown pseudo-header field"),
            (Self.base + [(":protocol", "websocket")], "extended CONNECT (:protocol) is not supported"),
            (Self.base + [(":path", "/again")], "a pseudo-header field given twice"),
            ([(":method", "GET"), (":path", "/")], "a request without :method, :scheme or :path"),
            ([(":scheme", "https"), (":path", "/")], "a request without :method, :scheme or :path"),
            (
                [(":method", "GET"), (":scheme", "https"), (":path", "/a b")],
                "a pseudo-header field's value with a control byte or a space"
            ),
            (
                [(":method", "GET"), (":scheme", "https"), (":path", "/a\r\nx: y")],
                "a pseudo-header field's value with a control byte or a space"
            ),
            (Self.base + [("x-a", "1\r\nx-b: 2")], "a field value with NUL, CR or LF"),
            (Self.base + [("x-a", "1\u{0}")], "a field value with NUL, CR or LF"),
            (
                [(":method", "CONNECT"), (":authority", "a:1"), (":path", "/")],
                "CONNECT needs :authority and no :scheme or :path"
            ),
        ] as [([(name: String, value: String)], String)])
    func malformedHeadIsRefused(_ fields: [(name: String, value: String)], reason: String) {
        #expect(Self.decoded(fields) == .refused(.badRequest, "a malformed HTTP/2 request: \(reason)"))
    }

    @Test("a well-formed CONNECT is refused as a method the server does not proxy")
    func connectIsNotProxied() {
        guard case .refused(let status, _) = Self.decoded([(":method", "CONNECT"), (":authority", "a:443")]) else {
            Issue.record("not refused")
            return
        }
        #expect(status == .methodNotAllowed)
    }
}
