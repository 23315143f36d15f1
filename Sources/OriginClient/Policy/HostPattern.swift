/// One entry of ``AddressPolicy/allowedHosts``: `*`, `*.example.com` or `example.com`.
struct HostPattern: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        /// `*`: any host (the address checks still apply).
        case any
        /// `*.example.com`: any name strictly below `example.com` (stored as `.example.com`).
        case subdomains(String)
        /// `example.com`, `192.0.2.1`, `[2001:db8::1]`: that host only.
        case exact(String)
    }

    let kind: Kind

    /// Parses a pattern; anything that is neither `*` nor `*.suffix` is an exact host name.
    init(_ text: String) {
        let normalized = Self.normalize(host: text)
        if normalized == "*" {
            kind = .any
        } else if normalized.hasPrefix("*."), normalized.count > 2 {
            kind = .subdomains(String(normalized.dropFirst()))
        } else {
            kind = .exact(normalized)
        }
    }

    /// Whether `host` (already normalized) matches.
    func matches(normalizedHost host: String) -> Bool {
        switch kind {
        case .any:
            return true
        case .subdomains(let suffix):
            return host.hasSuffix(suffix) && host.count > suffix.count
        case .exact(let name):
            return host == name
        }
    }

    /// Whether this pattern names `host` exactly (not through a wildcard).
    func isExact(normalizedHost host: String) -> Bool {
        if case .exact(let name) = kind { return host == name }
        return false
    }

    /// Lowercases ASCII letters, drops one trailing dot and IPv6 brackets, and writes IP literals canonically.
    static func normalize(host: String) -> String {
        var text = Substring(host)
        if text.hasPrefix("["), text.hasSuffix("]") {
            text = text.dropFirst().dropLast()
        }
        if text.hasSuffix("."), text.count > 1 {
            text = text.dropLast()
        }
        if let address = IPAddress(String(text)) {
            return address.description
        }
        return String(text).lowercased()
    }
}
