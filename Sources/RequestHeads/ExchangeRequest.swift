import HTTPTypes
import NIOHTTP1

/// The parts of a request head every answer is decided on: what the server's `RequestResolution` resolves (through the
/// one place that does, `ResolutionMemo`) and the answer's plan reads. Read from the connection's bytes
/// (``RequestHeadScanner``: GET, HEAD and OPTIONS over HTTP/1.1, in the strict form every client sends) or, on a
/// connection handed to the HTTP/1 decoder, from the decoder's head (``DecodedHead``: any method, HTTP/1.0 too).
package struct ExchangeRequest: Equatable {
    /// The method.
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
    /// `X-HLSCache-Read-Ahead`'s value: a fleet node's read-ahead, if the node is a peer (the server's
    /// `RequestResolution` decides).
    package var readAhead: String?
    /// `Authorization`, for the admin routes.
    package var authorization: String?
    /// Whether the connection closes after the answer (``ClosingRule``).
    package var closes: Bool
    /// Whether the request is HTTP/1.0: its answer says so, and a body of unknown length ends with the connection.
    package var isHTTP10 = false
    /// Whether the request is an HTTP/2 stream.
    package var isHTTP2 = false
    /// The player's CMCD (CTA-5004), taken out of ``target`` (the `CMCD` query parameter) or read from the `CMCD-*`
    /// headers; the query's when both.
    package var cmcd: CMCDReport?
    /// The `hlscache.*` parameters taken out of ``target`` (a manifest view, ``ViewQuery``), as written.
    package var view: String?

    /// A request read by ``RequestHeadScanner``, or by the decoder.
    package init(
        method: HTTPRequest.Method, target: String, origin: String?, range: String?, via: String?,
        accessControlRequestHeaders: String?, readAhead: String?, authorization: String? = nil, closes: Bool,
        isHTTP10: Bool = false, cmcd: CMCDReport? = nil
    ) {
        self.method = method
        self.target = target
        self.origin = origin
        self.range = range
        self.via = via
        self.accessControlRequestHeaders = accessControlRequestHeaders
        self.readAhead = readAhead
        self.authorization = authorization
        self.closes = closes
        self.isHTTP10 = isHTTP10
        self.cmcd = cmcd
    }

    /// The protocol the request came in, as the access log and the request metrics name it.
    package var wireProtocol: WireProtocol { isHTTP2 ? .h2 : isHTTP10 ? .http10 : .http11 }

    /// The request the decoder read as `head`, when it is an ordinary one (see ``DecodedHead``).
    package init?(_ head: HTTPRequestHead) {
        guard case .request(let request) = DecodedHead(head) else { return nil }
        self = request
    }
}

/// What a head the HTTP/1 decoder read asks for: a request, or a refusal that closes the connection (RFC 9112: no
/// `Host` in an HTTP/1.1 request, or more than one, is a 400; CONNECT is not proxied).
package enum DecodedHead: Equatable {
    /// A request to answer.
    case request(ExchangeRequest)
    /// Refused: answered with `status` and `reason`, and the connection closes.
    case refused(HTTPResponse.Status, String)

    /// - Parameter head: the decoded request head.
    package init(_ head: HTTPRequestHead) {
        if head.method == .CONNECT {
            self = .refused(.methodNotAllowed, "CONNECT is not supported: only GET and HEAD are proxied")
            return
        }
        var fields = ExchangeRequestFields()
        var upgrades = false
        for (name, value) in head.headers {
            var name = name
            var value = value
            let taken = name.withUTF8 { name in value.withUTF8 { fields.add(name: name, value: $0, fromBytes: false) } }
            if !taken { upgrades = true }
        }
        let version = (head.version.major, head.version.minor)
        guard fields.hosts == 1 || (fields.hosts == 0 && version < (1, 1)) else {
            self = .refused(.badRequest, "a request needs exactly one Host field, not \(fields.hosts)")
            return
        }
        let method = HTTPRequest.Method(head.method.rawValue) ?? .get
        var request = fields.requestWithAnyHosts(method: method, target: Self.originForm(head.uri))
        request.closes = ClosingRule.closes(
            major: head.version.major, minor: head.version.minor, tokens: fields.connection, upgrades: upgrades)
        request.isHTTP10 = version < (1, 1)
        self = .request(request)
    }

    /// The origin form (`/path?query`) of a request target: an absolute-form one (`http://host/path`, which a server
    /// must accept, RFC 9112 section 3.2.2) loses its scheme and authority, as the `Host` it names is ours; any other
    /// form is kept as it came.
    package static func originForm(_ target: String) -> String {
        let utf8 = target.utf8
        guard utf8.first != UInt8(ascii: "/"), let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return target }
        let scheme = target[..<colon].lowercased()
        guard scheme == "http" || scheme == "https", target[colon...].hasPrefix("://") else { return target }
        let authority = target.index(colon, offsetBy: 3)
        guard let path = target[authority...].firstIndex(where: { $0 == "/" || $0 == "?" }) else { return "/" }
        return target[path] == "?" ? "/" + target[path...] : String(target[path...])
    }
}

/// The HTTP version a request came in: the access log's `proto` and `hlscache_requests_total{protocol}`.
package enum WireProtocol: String, Sendable, CaseIterable {
    case http10 = "http/1.0"
    case http11 = "http/1.1"
    case h2

    /// Its place in ``allCases``.
    package var index: Int {
        switch self {
        case .http10: 0
        case .http11: 1
        case .h2: 2
        }
    }
}
