/// What to fetch from an origin.
public struct OriginRequest: Sendable {
    /// The HTTP method: only the two a caching proxy needs.
    public enum Method: String, Sendable, Hashable {
        /// `GET`: headers and body.
        case get = "GET"
        /// `HEAD`: headers only; the body is always empty.
        case head = "HEAD"
    }

    /// A byte range to request with a `Range` header.
    public enum ByteRange: Sendable, Hashable, CustomStringConvertible {
        /// `bytes=a-b`: from `a` to `b`, both included.
        case closed(ClosedRange<Int64>)
        /// `bytes=a-`: from `a` to the end.
        case from(Int64)
        /// `bytes=-n`: the last `n` bytes.
        case suffix(Int64)

        /// The range in libcurl's `CURLOPT_RANGE` form, without `bytes=`: `0-99`, `100-`, `-500`.
        public var description: String {
            switch self {
            case .closed(let range): "\(range.lowerBound)-\(range.upperBound)"
            case .from(let start): "\(start)-"
            case .suffix(let count): "-\(count)"
            }
        }

        var isValid: Bool {
            switch self {
            case .closed(let range): range.lowerBound >= 0
            case .from(let start): start >= 0
            case .suffix(let count): count > 0
            }
        }
    }

    /// The absolute `http` or `https` URL.
    public var url: String
    /// `GET` or `HEAD`.
    public var method: Method
    /// The byte range to request, if any.
    public var byteRange: ByteRange?
    /// Extra request headers, sent after the configuration's ``OriginClientConfiguration/extraHeaders``.
    public var headers: [(name: String, value: String)]
    /// Whether to accept a gzip-encoded answer (for playlists); the body is decoded before it is handed over.
    public var acceptEncoding: Bool

    /// The requested range when it is a closed one (`bytes=a-b`); setting it replaces ``byteRange``.
    public var range: ClosedRange<Int64>? {
        get {
            if case .closed(let range) = byteRange { return range }
            return nil
        }
        set { byteRange = newValue.map(ByteRange.closed) }
    }

    /// Creates a request.
    /// - Parameters:
    ///   - url: the absolute `http` or `https` URL.
    ///   - method: `GET` (default) or `HEAD`.
    ///   - range: a closed byte range to request, if any.
    ///   - headers: extra request headers.
    ///   - acceptEncoding: whether to accept gzip (for playlists).
    public init(
        url: String,
        method: Method = .get,
        range: ClosedRange<Int64>? = nil,
        headers: [(name: String, value: String)] = [],
        acceptEncoding: Bool = false
    ) {
        self.url = url
        self.method = method
        self.byteRange = range.map(ByteRange.closed)
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
        byteRange: ByteRange?,
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
