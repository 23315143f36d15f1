import ByteRanges

/// An ``OriginRequest`` checked and ready for the worker: URL parsed, host allowed, headers valid.
struct PreparedRequest: Sendable {
    /// The URL as given by the caller.
    let url: String
    /// The URL as parsed by curl.
    let target: CurlURL
    let method: OriginRequest.Method
    /// The `CURLOPT_RANGE` value, if any.
    let range: String?
    /// Configuration headers, then the request's.
    let headers: [(name: String, value: String)]
    /// Configuration headers for the hosts of a pattern, chosen per hop.
    let originHeaders: [OriginHeader]
    let acceptEncoding: Bool
    /// The request's own total timeout, if shorter than the client's.
    let totalTimeout: Duration?

    /// Validates `request` against `configuration`, before anything is resolved or sent.
    /// - Throws: ``OriginError/Kind/invalidRequest`` or ``OriginError/Kind/refused``.
    init(_ request: OriginRequest, configuration: OriginClientConfiguration) throws(OriginError) {
        guard let target = CurlURL.parse(request.url) else {
            throw .invalidRequest(url: request.url, reason: "not an absolute URL")
        }
        guard target.isHTTP else {
            throw .invalidRequest(url: request.url, reason: "scheme \(target.scheme) is not http or https")
        }
        try Self.checkPolicy(configuration.policy, target: target)
        if let range = request.byteRange, !range.isValid {
            throw .invalidRequest(url: request.url, reason: "invalid byte range \(range)")
        }
        if let field = Self.invalidHeader(in: request.headers) {
            throw .invalidRequest(url: request.url, reason: "header \(field) has an invalid name or value")
        }
        self.url = request.url
        self.target = target
        self.method = request.method
        self.range = request.byteRange?.description
        self.headers = configuration.extraHeaders + request.headers
        self.originHeaders = configuration.originHeaders
        self.acceptEncoding = request.acceptEncoding
        self.totalTimeout = request.totalTimeout
    }

    /// The pre-DNS check of a URL or redirect target: host patterns, and the address of an IP literal.
    static func checkPolicy(_ policy: AddressPolicy, target: CurlURL) throws(OriginError) {
        try policy.check(host: target.host, port: target.port, url: target.url)
        if let literal = IPAddress(target.host),
            let reason = policy.refusalReason(address: literal, host: target.host, port: target.port)
        {
            throw .refused(url: target.url, reason: reason)
        }
    }

    /// The first header whose name is not a token or whose value holds a line break or NUL.
    static func invalidHeader(in headers: [(name: String, value: String)]) -> String? {
        for header in headers {
            let nameIsToken = !header.name.isEmpty && header.name.utf8.allSatisfy(isTokenByte)
            let valueIsSafe = !header.value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
            if !nameIsToken || !valueIsSafe { return header.name }
        }
        return nil
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    /// The header lines for a hop to `hop`: credentials are dropped when the hop leaves the request's origin.
    func headerLines(for hop: CurlURL) -> [String] {
        let sameOrigin = hop.origin == target.origin
        let credentials: Set<String> = ["authorization", "cookie", "proxy-authorization"]
        let scoped = originHeaders.filter { $0.applies(to: hop.host, port: hop.port) }.map {
            (name: $0.name, value: $0.value)
        }
        return (scoped + headers).compactMap { header in
            if !sameOrigin, credentials.contains(header.name.lowercased()) { return nil }
            // "Name;" is curl's way to send a header with an empty value; "Name:" would remove it.
            return header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)"
        }
    }
}
