import ByteRanges

/// What to fetch from an origin.
public struct OriginRequest: Sendable {
    /// The HTTP method: only the two a caching proxy needs.
    public enum Method: String, Sendable, Hashable {
        /// `GET`: headers and body.
        case get = "GET"
        /// `HEAD`: headers only; the body is always empty.
        case head = "HEAD"
    }

    /// The absolute `http` or `https` URL.
    public var url: String
    /// `GET` or `HEAD`.
    public var method: Method
    /// The byte range to request with a `Range` header, if any.
    public var byteRange: RequestedRange?
    /// Extra request headers, sent after the configuration's ``OriginClientConfiguration/extraHeaders``.
    public var headers: [(name: String, value: String)]
    /// Whether to accept a gzip-encoded answer (for playlists); the body is decoded before it is handed over.
    public var acceptEncoding: Bool
    /// A shorter total timeout for this request than the client's (a manifest that must arrive in time); `nil`
    /// for the client's.
    public var totalTimeout: Duration? = nil

    /// Creates a request.
    /// - Parameters:
    ///   - url: the absolute `http` or `https` URL.
    ///   - method: `GET` (default) or `HEAD`.
    ///   - range: the bytes to request, if not the whole object.
    ///   - headers: extra request headers.
    ///   - acceptEncoding: whether to accept gzip (for playlists).
    public init(
        url: String,
        method: Method = .get,
        range: ByteRange? = nil,
        headers: [(name: String, value: String)] = [],
        acceptEncoding: Bool = false
    ) {
        self.url = url
        self.method = method
        self.byteRange = range.flatMap(RequestedRange.init)
        self.headers = headers
        self.acceptEncoding = acceptEncoding
    }

    /// Creates a request for any form of byte range.
    /// - Parameters:
    ///   - url: the absolute `http` or `https` URL.
    ///   - method: `GET` (default) or `HEAD`.
    ///   - byteRange: the range to request.
    ///   - headers: extra request headers.
    ///   - acceptEncoding: whether to accept gzip (for playlists).
    public init(
        url: String,
        method: Method = .get,
        byteRange: RequestedRange?,
        headers: [(name: String, value: String)] = [],
        acceptEncoding: Bool = false
    ) {
        self.url = url
        self.method = method
        self.byteRange = byteRange
        self.headers = headers
        self.acceptEncoding = acceptEncoding
    }
}
