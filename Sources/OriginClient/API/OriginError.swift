/// An error fetching from an origin.
///
/// Kinds are static members of ``Kind`` so that new ones can be added without breaking users.
/// ``label`` is short and has no associated values, so it is safe as a metric label;
/// ``description`` is a message a person can act on, naming the origin URL:
/// `origin returned 404 for https://cdn.example.com/seg12.ts`.
public struct OriginError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of an ``OriginError``, comparable with `==`.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Code: String, Sendable, Hashable {
            case refused
            case invalidRequest = "invalid_request"
            case invalidConfiguration = "invalid_configuration"
            case dnsFailure = "dns_failure"
            case connectFailure = "connect_failure"
            case tlsFailure = "tls_failure"
            case timeout
            case httpStatus = "http_status"
            case truncatedBody = "truncated_body"
            case bodyTooLong = "body_too_long"
            case tooLarge = "too_large"
            case tooManyRedirects = "too_many_redirects"
            case protocolError = "protocol_error"
            case transferFailed = "transfer_failed"
            case cancelled
            case shutDown = "shut_down"
        }

        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The short, stable name of the kind (`refused`, `timeout`, `http_status`…).
        public var description: String { code.rawValue }

        /// The address policy refused the host, an address it resolved to, or a redirect target.
        public static let refused = Kind(.refused)
        /// The request cannot be sent: malformed URL, unsupported scheme, or a header with a line break.
        public static let invalidRequest = Kind(.invalidRequest)
        /// The client configuration is unusable.
        public static let invalidConfiguration = Kind(.invalidConfiguration)
        /// The origin's host name did not resolve.
        public static let dnsFailure = Kind(.dnsFailure)
        /// No connection could be made, or it failed before a response arrived.
        public static let connectFailure = Kind(.connectFailure)
        /// The TLS handshake or certificate verification failed.
        public static let tlsFailure = Kind(.tlsFailure)
        /// A timeout fired; ``OriginError/timeoutKind`` says which.
        public static let timeout = Kind(.timeout)
        /// The origin answered with a status the caller did not accept; ``OriginError/status`` holds it.
        public static let httpStatus = Kind(.httpStatus)
        /// The body ended before the length the origin announced, or the connection broke mid-body.
        public static let truncatedBody = Kind(.truncatedBody)
        /// The body was longer than the length the origin announced.
        public static let bodyTooLong = Kind(.bodyTooLong)
        /// The body is larger than the configured maximum.
        public static let tooLarge = Kind(.tooLarge)
        /// More redirects than allowed, or a redirect loop.
        public static let tooManyRedirects = Kind(.tooManyRedirects)
        /// The origin's answer is not valid HTTP, or its content encoding is broken.
        public static let protocolError = Kind(.protocolError)
        /// Any other transfer failure reported by libcurl.
        public static let transferFailed = Kind(.transferFailed)
        /// The fetching or consuming task was cancelled, or the body was dropped.
        public static let cancelled = Kind(.cancelled)
        /// The client was shut down.
        public static let shutDown = Kind(.shutDown)
    }

    /// The kind of error.
    public let kind: Kind
    /// The URL the error concerns (the redirect hop that failed, when there were redirects).
    public let url: String
    /// The HTTP status, for ``Kind/httpStatus``.
    public let status: Int?
    /// Which timeout fired, for ``Kind/timeout``.
    public let timeoutKind: OriginTimeoutKind?
    /// What happened, for a person to read (without the URL).
    public let reason: String

    private init(
        _ kind: Kind,
        url: String,
        reason: String,
        status: Int? = nil,
        timeoutKind: OriginTimeoutKind? = nil
    ) {
        self.kind = kind
        self.url = url
        self.reason = reason
        self.status = status
        self.timeoutKind = timeoutKind
    }

    /// A short, stable name of the kind of error, safe as a metric label.
    public var label: String { kind.description }

    /// The reason followed by the URL: `origin returned 404 for https://cdn.example.com/seg12.ts`.
    public var description: String { url.isEmpty ? reason : "\(reason) for \(url)" }

    /// The address policy refused the fetch before any byte was sent to the refused address.
    /// - Parameters:
    ///   - url: the URL or redirect target refused.
    ///   - reason: which rule refused it.
    public static func refused(url: String, reason: String) -> OriginError {
        OriginError(.refused, url: url, reason: "refused by the address policy: \(reason)")
    }

    /// The request cannot be sent as given.
    /// - Parameters:
    ///   - url: the URL requested.
    ///   - reason: what is wrong with it.
    public static func invalidRequest(url: String, reason: String) -> OriginError {
        OriginError(.invalidRequest, url: url, reason: "invalid origin request: \(reason)")
    }

    /// The client configuration is unusable.
    /// - Parameter reason: which value is wrong.
    public static func invalidConfiguration(reason: String) -> OriginError {
        OriginError(.invalidConfiguration, url: "", reason: "invalid origin client configuration: \(reason)")
    }

    /// The host name did not resolve.
    /// - Parameters:
    ///   - url: the URL whose host did not resolve.
    ///   - detail: the resolver's message.
    public static func dnsFailure(url: String, detail: String) -> OriginError {
        OriginError(
            .dnsFailure, url: url, reason: "could not resolve the origin host (\(detail)); check the URL and DNS")
    }

    /// No connection could be made, or it failed before a response.
    /// - Parameters:
    ///   - url: the URL being fetched.
    ///   - detail: libcurl's message.
    public static func connectFailure(url: String, detail: String) -> OriginError {
        OriginError(.connectFailure, url: url, reason: "could not connect to the origin (\(detail))")
    }

    /// The TLS handshake or certificate verification failed.
    /// - Parameters:
    ///   - url: the URL being fetched.
    ///   - detail: libcurl's message.
    public static func tlsFailure(url: String, detail: String) -> OriginError {
        OriginError(
            .tlsFailure, url: url,
            reason: "TLS with the origin failed (\(detail)); check its certificate and the CA bundle")
    }

    /// A timeout fired.
    /// - Parameters:
    ///   - kind: which timeout.
    ///   - limit: its configured value.
    ///   - url: the URL being fetched.
    public static func timeout(_ kind: OriginTimeoutKind, limit: Duration, url: String) -> OriginError {
        let what: String
        switch kind {
        case .connect: what = "no connection to the origin"
        case .firstByte: what = "no response from the origin"
        case .stall: what = "the origin sent no byte"
        case .total: what = "the fetch did not complete"
        case .rate: what = "the origin streamed below the minimum rate"
        }
        return OriginError(.timeout, url: url, reason: "\(kind) timeout: \(what) within \(limit)", timeoutKind: kind)
    }

    /// The origin answered with a status the caller does not accept.
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - url: the URL that answered.
    public static func httpStatus(_ status: Int, url: String) -> OriginError {
        OriginError(.httpStatus, url: url, reason: "origin returned \(status)", status: status)
    }

    /// The body ended early.
    /// - Parameters:
    ///   - url: the URL being fetched.
    ///   - received: bytes received.
    ///   - expected: the announced length, when there was one.
    ///   - detail: what ended it (connection closed, reset…).
    public static func truncatedBody(url: String, received: Int64, expected: Int64?, detail: String) -> OriginError {
        let announced = expected.map { " of \($0) announced" } ?? ""
        return OriginError(
            .truncatedBody, url: url, reason: "origin body truncated after \(received) bytes\(announced) (\(detail))")
    }

    /// The body is longer than announced.
    /// - Parameters:
    ///   - url: the URL being fetched.
    ///   - received: bytes received so far.
    ///   - expected: the announced length.
    public static func bodyTooLong(url: String, received: Int64, expected: Int64) -> OriginError {
        OriginError(.bodyTooLong, url: url, reason: "origin sent \(received) body bytes but announced \(expected)")
    }

    /// The body exceeds the configured maximum.
    /// - Parameters:
    ///   - url: the URL being fetched.
    ///   - size: the announced length or the bytes received so far.
    ///   - limit: the maximum.
    public static func tooLarge(url: String, size: Int64, limit: Int64) -> OriginError {
        OriginError(.tooLarge, url: url, reason: "origin body of \(size) bytes exceeds the limit of \(limit) bytes")
    }

    /// Too many redirects, or a loop.
    /// - Parameters:
    ///   - url: the redirect target that was not followed.
    ///   - limit: the maximum number of redirects.
    ///   - loop: whether the target had already been visited.
    public static func tooManyRedirects(url: String, limit: Int, loop: Bool) -> OriginError {
        let reason = loop ? "redirect loop" : "more than \(limit) redirects"
        return OriginError(.tooManyRedirects, url: url, reason: "\(reason); fix the origin or use the final URL")
    }

    /// The origin's answer is not valid HTTP, or its content encoding is broken.
    /// - Parameters:
    ///   - url: the URL being fetched.
    ///   - detail: libcurl's message.
    public static func protocolError(url: String, detail: String) -> OriginError {
        OriginError(.protocolError, url: url, reason: "invalid answer from the origin (\(detail))")
    }

    /// Any other failure reported by libcurl.
    /// - Parameters:
    ///   - url: the URL being fetched.
    ///   - detail: libcurl's message.
    public static func transferFailed(url: String, detail: String) -> OriginError {
        OriginError(.transferFailed, url: url, reason: "origin transfer failed (\(detail))")
    }

    /// The fetch was cancelled or its body dropped.
    /// - Parameter url: the URL being fetched.
    public static func cancelled(url: String) -> OriginError {
        OriginError(.cancelled, url: url, reason: "origin fetch cancelled")
    }

    /// The client was shut down.
    /// - Parameter url: the URL being fetched.
    public static func shutDown(url: String) -> OriginError {
        OriginError(.shutDown, url: url, reason: "origin client is shut down")
    }
}
