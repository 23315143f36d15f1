import Foundation

/// The scheme, host and port of an absolute `http` or `https` URL given in the configuration (`--origin`,
/// `--parent`, `--fleet-url`, prefetch's stream and `--server`): the one check that such a URL names an origin, and
/// the one place its port defaults and its `host:port` pattern is written. Requests' own URLs are read on the hot
/// path byte by byte (``CurlURL``).
public struct HTTPOrigin: Sendable, Hashable {
    /// `http` or `https`, in lower case.
    public let scheme: String
    /// The host as written (an IPv6 literal without brackets).
    public let host: String
    /// The port: the URL's, or the scheme's default (80, 443).
    public let port: Int
    /// Whether the URL has a user or password, a query or a fragment: not a base URL.
    public let hasMoreThanABase: Bool

    /// Reads `url`.
    /// - Returns: `nil` unless it is an absolute http(s) URL with a host.
    public init?(url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = host
        port = components.port ?? (scheme == "https" ? 443 : 80)
        hasMoreThanABase =
            components.user != nil || components.password != nil || components.query != nil
            || components.fragment != nil
    }

    /// `host:port`, an IPv6 host in brackets: an address policy's pattern for exactly this origin.
    public var hostAndPort: String {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(bracketed):\(port)"
    }
}
