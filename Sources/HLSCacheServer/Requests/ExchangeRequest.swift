import HTTPTypes
import NIOHTTP1

/// The parts of a request head every answer is decided on: what ``RequestResolution`` resolves (through the one
/// place that does, ``ResolutionMemo``) and the answer's plan reads. Read from the connection's bytes
/// (``RequestHeadScanner``), from the HTTP/1 decoder's head (no conversion to HTTP types), or from the responder's
/// request.
///
/// From the bytes and the decoder's head, `nil` for anything the event loop does not answer: a method other than GET,
/// HEAD and OPTIONS, HTTP/1.0 (its answer's framing and version are ``CloseNormalizer``'s), a target that is not
/// origin-form (`/…`), an upgrade request, or more than one `Host`. Those go on to Hummingbird's responder, which
/// reads them with ``init(method:target:fields:)``.
package struct ExchangeRequest: Equatable {
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
    /// ``RequestResolution/readAheadHeader``'s value: a fleet node's read-ahead, if the node is a peer
    /// (``RequestResolution``).
    package var readAhead: String?
    /// Whether the connection closes after the answer (`Connection: close`).
    package var closes: Bool

    /// A request read by ``RequestHeadScanner``.
    init(
        method: HTTPRequest.Method, target: String, origin: String?, range: String?, via: String?,
        accessControlRequestHeaders: String?, readAhead: String?, closes: Bool
    ) {
        self.method = method
        self.target = target
        self.origin = origin
        self.range = range
        self.via = via
        self.accessControlRequestHeaders = accessControlRequestHeaders
        self.readAhead = readAhead
        self.closes = closes
    }

    /// A request the responder answers: any method, its fields as HTTP types hold them.
    /// - Parameters:
    ///   - method: the method.
    ///   - target: the request target (path and query).
    ///   - fields: the request's fields.
    init(method: HTTPRequest.Method, target: String, fields: HTTPFields) {
        self.init(
            method: method, target: target, origin: fields[.origin], range: fields[.range], via: fields[.via],
            accessControlRequestHeaders: fields[.accessControlRequestHeaders],
            readAhead: fields[RequestResolution.readAheadHeader], closes: false)
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
        var fields = ExchangeRequestFields()
        for (name, value) in head.headers {
            var name = name
            var value = value
            let taken = name.withUTF8 { name in value.withUTF8 { fields.add(name: name, value: $0, fromBytes: false) } }
            guard taken else { return nil }
        }
        guard let request = fields.request(method: method, target: head.uri) else { return nil }
        self = request
    }
}
