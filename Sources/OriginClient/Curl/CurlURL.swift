import CCurl

/// A URL parsed by libcurl's URL API, so that the host the policy checks is the host curl connects to.
struct CurlURL: Sendable, Hashable {
    /// The whole URL, normalized by curl.
    let url: String
    /// `http` or `https` (lowercase); other schemes are kept so that callers can refuse them by name.
    let scheme: String
    /// The host: a name in punycode, an IPv4 literal, or an IPv6 literal in brackets.
    let host: String
    /// The port, the scheme's default when the URL has none.
    let port: Int

    /// `scheme://host:port`, to tell whether a redirect leaves the origin.
    var origin: String { "\(scheme)://\(host):\(port)" }

    /// Whether the scheme is one the client fetches (and the URL has a host).
    var isHTTP: Bool { (scheme == "http" || scheme == "https") && !host.isEmpty }

    /// Parses an absolute URL.
    static func parse(_ text: String) -> CurlURL? {
        resolve(text, against: nil)
    }

    /// Resolves a redirect's `Location` (absolute or relative) against the URL that answered.
    static func resolve(_ location: String, against base: String?) -> CurlURL? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        if let base {
            guard curl_url_set(handle, CURLUPART_URL, base, 0) == CURLUE_OK else { return nil }
        }
        // What curl itself does for a Location header: encode what needs it, accept spaces.
        let flags = base == nil ? 0 : UInt32(CURLU_URLENCODE) | UInt32(CURLU_ALLOW_SPACE)
        guard curl_url_set(handle, CURLUPART_URL, location, flags | UInt32(CURLU_NON_SUPPORT_SCHEME)) == CURLUE_OK,
            let url = part(handle, CURLUPART_URL),
            let scheme = part(handle, CURLUPART_SCHEME)
        else {
            return nil
        }
        // `file:` URLs have no host; they are refused by scheme, so an empty host is fine here.
        let host = part(handle, CURLUPART_HOST, flags: UInt32(CURLU_PUNYCODE)) ?? part(handle, CURLUPART_HOST) ?? ""
        let port = part(handle, CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)).flatMap { Int($0) } ?? 0
        return CurlURL(url: url, scheme: scheme.lowercased(), host: host, port: port)
    }

    private static func part(_ handle: OpaquePointer, _ what: CURLUPart, flags: UInt32 = 0) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, what, &value, flags) == CURLUE_OK, let value else { return nil }
        defer { curl_free(value) }
        return String(cString: value)
    }
}
