import HTTPTypes
import NIOHTTP1

/// The parts of a request head the event-loop hit path decides on, read from the connection's bytes
/// (``RequestHeadScanner``) or straight from the HTTP/1 decoder's head (no conversion to HTTP types): only requests
/// whose answer needs nothing else qualify.
///
/// `nil` for anything the async responder answers better: a method other than GET, HEAD and OPTIONS, HTTP/1.0
/// (its answer's framing and version are ``CloseNormalizer``'s), a target that is not origin-form (`/…`), an
/// upgrade request, or more than one `Host`. Those go on to Hummingbird, which answers them as before.
package struct HitRequest: Equatable {
    /// GET, HEAD or OPTIONS.
    package var method: HTTPRequest.Method
    /// The request target as received (path and query).
    package var target: String
    /// `Origin`, for the CORS grant.
    package var origin: String?
    /// `Range`.
    package var range: String?
    /// `Via`: the hlscache nodes the request passed through.
    package var via: String?
    /// `Access-Control-Request-Headers`, for a preflight's answer.
    package var accessControlRequestHeaders: String?
    /// Whether the request is a fleet node's read-ahead (``RequestResolution/readAheadHeader``).
    package var isReadAhead: Bool
    /// Whether the connection closes after the answer (`Connection: close`).
    package var closes: Bool

    /// A request read by ``RequestHeadScanner``.
    init(
        method: HTTPRequest.Method, target: String, origin: String?, range: String?, via: String?,
        accessControlRequestHeaders: String?, isReadAhead: Bool, closes: Bool
    ) {
        self.method = method
        self.target = target
        self.origin = origin
        self.range = range
        self.via = via
        self.accessControlRequestHeaders = accessControlRequestHeaders
        self.isReadAhead = isReadAhead
        self.closes = closes
    }

    /// - Parameter head: the decoded request head.
    package init?(_ head: HTTPRequestHead) {
        guard head.version == .http1_1 else { return nil }
        switch head.method {
        case .GET: method = .get
        case .HEAD: method = .head
        case .OPTIONS: method = .options
        default: return nil
        }
        guard head.uri.utf8.first == UInt8(ascii: "/") else { return nil }
        var hosts = 0
        var closes = false
        var origin: String?
        var range: String?
        var via: String?
        var requestHeaders: String?
        var isReadAhead = false
        for (name, value) in head.headers {
            switch name.utf8.count {
            case 4 where Self.equal(name, "host"): hosts += 1
            case 5 where Self.equal(name, "range"): Self.join(&range, value)
            case 3 where Self.equal(name, "via"): Self.join(&via, value)
            case 6 where Self.equal(name, "origin"): Self.join(&origin, value)
            case 7 where Self.equal(name, "upgrade"): return nil
            case 10 where Self.equal(name, "connection"):
                if Self.equal(value, "close") { closes = true }
                if Self.equal(value, "upgrade") { return nil }
            case 21 where Self.equal(name, "x-hlscache-read-ahead"): isReadAhead = true
            case 30 where Self.equal(name, "access-control-request-headers"): Self.join(&requestHeaders, value)
            default: break
            }
        }
        guard hosts <= 1 else { return nil }
        self.target = head.uri
        self.origin = origin
        self.range = range
        self.via = via
        self.accessControlRequestHeaders = requestHeaders
        self.isReadAhead = isReadAhead
        // An HTTP/1.1 request without `Connection: close` keeps the connection (the decoder's own test).
        self.closes = closes || !head.isKeepAlive
    }

    /// A repeated field's values, joined as HTTP types joins them (`, `), so both writers read the same value.
    private static func join(_ field: inout String?, _ value: String) {
        field = field.map { $0 + ", " + value } ?? value
    }

    /// ASCII case-insensitive equality with a lowercase literal, without allocating.
    private static func equal(_ text: String, _ lowercase: StaticString) -> Bool {
        let bytes = text.utf8
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            var index = 0
            for byte in bytes {
                let folded = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                guard folded == expected[index] else { return false }
                index += 1
            }
            return true
        }
    }
}
