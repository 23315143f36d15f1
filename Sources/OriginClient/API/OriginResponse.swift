/// An origin's answer: the final hop's status and headers, and the body still streaming.
///
/// Non-2xx statuses are returned as responses, not thrown, so that the caller decides
/// (a cache may pass a 404 through); ``checkStatus()`` throws ``OriginError/Kind/httpStatus`` for them.
/// Dropping the response (and its body) without reading the body aborts the transfer.
public struct OriginResponse: Sendable {
    /// The HTTP status of the final hop.
    public let status: Int
    /// The final hop's headers in arrival order, names lowercased.
    ///
    /// When the client decoded an encoded body (asked for with ``OriginRequest/acceptEncoding``, or sent encoded
    /// anyway), `content-encoding` and `content-length` are removed, since they describe the encoded bytes.
    public let headers: [(name: String, value: String)]
    /// The URL of the final hop, after redirects.
    public let effectiveURL: String
    /// The body length announced by the origin, or `nil` when unknown or when the body was decoded.
    public let contentLength: Int64?
    /// The number of redirects followed to reach this response.
    public let redirectCount: Int
    /// The body, as chunks of bytes; read it once.
    public let body: OriginBody

    init(head: ResponseHead, body: OriginBody) {
        self.status = head.status
        self.headers = head.headers
        self.effectiveURL = head.effectiveURL
        self.contentLength = head.contentLength
        self.redirectCount = head.redirectCount
        self.body = body
    }

    /// The first value of a header.
    /// - Parameter name: the header name, in any case.
    /// - Returns: its first value, or `nil` when absent.
    public func header(_ name: String) -> String? {
        let name = name.lowercased()
        return headers.first { $0.name == name }?.value
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// Throws unless the status is 2xx.
    /// - Returns: the response itself, to chain: `try await client.fetch(request).checkStatus()`.
    /// - Throws: ``OriginError`` of kind ``OriginError/Kind/httpStatus`` with ``OriginError/status`` set.
    @discardableResult
    public func checkStatus() throws(OriginError) -> OriginResponse {
        guard isSuccess else { throw .httpStatus(status, url: effectiveURL) }
        return self
    }
}
