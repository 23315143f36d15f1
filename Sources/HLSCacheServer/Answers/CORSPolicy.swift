import HTTPTypes

/// Which web pages may read hlscache's answers (`--cors-origin`): any (`*`, the default), a list of page origins,
/// or none. Decided once per request, into the request's ``CORSPolicy/Grant``, which ``Answer`` applies to every
/// answer: proxied objects, playlists, errors and hlscache's own routes alike.
public struct CORSPolicy: Sendable, Equatable {
    /// The page origins allowed (`https://site.example`), or `["*"]` for any; empty: CORS off.
    public let origins: [String]

    /// A policy from `--cors-origin` values: `*`, page origins, or `none` (alone) for off.
    /// - Throws: ``CORSPolicy/InvalidOrigin`` naming a value that is not `*`, `none` or an origin.
    public init(arguments: [String]) throws(InvalidOrigin) {
        if arguments == ["none"] {
            origins = []
            return
        }
        for value in arguments where value != "*" {
            let isOrigin =
                (value.hasPrefix("http://") || value.hasPrefix("https://"))
                && !value.dropFirst(8).contains("/") && value.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
            guard isOrigin else { throw InvalidOrigin(value: value) }
        }
        origins = arguments.contains("*") || arguments.isEmpty ? ["*"] : arguments
    }

    /// Any page may read answers.
    public static let anyOrigin = CORSPolicy(checked: ["*"])
    /// No CORS headers at all.
    public static let off = CORSPolicy(checked: [])

    private init(checked origins: [String]) { self.origins = origins }

    /// A `--cors-origin` value that is neither `*`, `none` nor a page origin.
    public struct InvalidOrigin: Error, CustomStringConvertible {
        /// The value given.
        public let value: String
        /// What to do.
        public var description: String {
            "--cors-origin must be *, none, or a page origin such as https://site.example (no path): \(value)"
        }
    }

    /// What one request is granted: the `Access-Control-Allow-Origin` value, and whether the answer depends on
    /// the request's `Origin` (a list is configured). Every answer adds what its request was granted
    /// (``Answer/forEachCarriedField(_:)``, ``Answer/headers``).
    struct Grant: Sendable {
        /// The `Access-Control-Allow-Origin` value, or `nil` for no CORS headers.
        var allowOrigin: String?
        /// Whether to send `Vary: Origin`.
        var variesByOrigin = false

        /// No CORS headers.
        static let none = Grant(allowOrigin: nil)
    }

    /// The grant of a request whose `Origin` header is `requestOrigin`.
    func grant(requestOrigin: String?) -> Grant {
        switch origins {
        case []: return .none
        case ["*"]: return Grant(allowOrigin: "*")
        default:
            let allowed = requestOrigin.flatMap { origin in origins.contains(origin) ? origin : nil }
            return Grant(allowOrigin: allowed, variesByOrigin: true)
        }
    }

    /// The headers a page's script may read besides the CORS-safelisted ones.
    static let exposedHeaders =
        "Content-Length, Content-Range, Accept-Ranges, X-Cache, Age, X-Request-Id, CMSD-Static, CMSD-Dynamic"

    /// The request headers a page's player may send: `Range` and the CMCD headers (CTA-5004). Nothing else is
    /// granted, whatever a preflight asks for (`Authorization` above all: the admin routes are not for pages).
    static let grantedRequestHeaders: [String] = [
        "range", "cmcd-request", "cmcd-object", "cmcd-status", "cmcd-session",
    ]

    /// The preflight answer's own headers: methods, the request headers asked for that players use
    /// (``grantedRequestHeaders``; `Range` when none of them is asked for), and how long the browser may remember
    /// them.
    /// - Parameter requestedHeaders: the `Access-Control-Request-Headers` value, if any.
    static func preflightHeaders(requestedHeaders: String?) -> HTTPFields {
        var headers = HTTPFields()
        headers[.allow] = "GET, HEAD, OPTIONS"
        headers[.accessControlAllowMethods] = "GET, HEAD, OPTIONS"
        let names = (requestedHeaders ?? "").split(separator: ",")
            .map { $0.filter { $0 != " " && $0 != "\t" } }
            .filter { name in grantedRequestHeaders.contains(name.lowercased()) }
        headers[.accessControlAllowHeaders] = names.isEmpty ? "Range" : names.joined(separator: ", ")
        headers[.accessControlMaxAge] = "86400"
        return headers
    }
}
