import HTTPTypes

extension DecodedHead {
    /// What an HTTP/2 stream's request head asks for (RFC 9113 section 8.3): its pseudo-header fields (`:method`,
    /// `:path`; `:authority` stands for `Host`) and its fields, read by the same ``ExchangeRequestFields`` as an
    /// HTTP/1 head's. The block is checked here (``HTTP2HeadCheck``: lowercase names, pseudo-fields first, no
    /// connection-specific field), not by the framing layer; a refusal ends the stream, not the connection.
    /// - Parameter fields: the head's fields in order, pseudo-fields included.
    package init(http2 fields: some Sequence<(name: String, value: String)>) {
        var method: String?
        var path: String?
        var taken = ExchangeRequestFields()
        var check = HTTP2HeadCheck()
        for (name, value) in fields {
            if let malformed = check.check(name: name, value: value) {
                self = .refused(.badRequest, "a malformed HTTP/2 request: \(malformed)")
                return
            }
            switch name {
            case ":method": method = value
            case ":path": path = value
            case ":authority", ":scheme": continue
            default:
                var name = name
                var value = value
                _ = name.withUTF8 { name in value.withUTF8 { taken.add(name: name, value: $0, fromBytes: false) } }
            }
        }
        if let malformed = check.end(isConnect: method == "CONNECT") {
            self = .refused(.badRequest, "a malformed HTTP/2 request: \(malformed)")
            return
        }
        guard let method, method != "CONNECT" else {
            self = .refused(.methodNotAllowed, "CONNECT is not supported: only GET and HEAD are proxied")
            return
        }
        guard let path, path.utf8.first == UInt8(ascii: "/") || (path == "*" && method == "OPTIONS") else {
            self = .refused(.badRequest, "an HTTP/2 request needs a :path starting with /")
            return
        }
        var request = taken.requestWithAnyHosts(method: HTTPRequest.Method(method) ?? .get, target: path)
        // A stream closes by itself; the connection goes on.
        request.closes = false
        request.isHTTP2 = true
        self = .request(request)
    }
}
