/// One entry of ``AddressPolicy/allowedHosts``: `*`, `*.example.com` or `example.com`, the last optionally with a
/// port (`127.0.0.1:8080`, `[::1]:8080`): then only that port of the host matches.
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
    /// The one port an exact pattern allows, if it names one.
    let port: Int?

    /// Parses a pattern; anything that is neither `*` nor `*.suffix` is an exact host name, with a port if it ends
    /// in one.
    init(_ text: String) {
        let (host, port) = Self.splitPort(text)
        self.port = port
        let normalized = Self.normalize(host: host)
        if normalized == "*" {
            kind = .any
        } else if normalized.hasPrefix("*."), normalized.count > 2 {
            kind = .subdomains(String(normalized.dropFirst()))
        } else {
            kind = .exact(normalized)
        }
    }

    /// `host:port` or `[v6]:port` split; the text whole, with no port, when it ends in none.
    static func splitPort(_ text: String) -> (host: String, port: Int?) {
        let bytes = Array(text.utf8)
        guard let colon = bytes.lastIndex(of: UInt8(ascii: ":")) else { return (text, nil) }
        let digits = bytes[(colon + 1)...]
        guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let port = Int(String(decoding: digits, as: UTF8.self)), (1...65535).contains(port)
        else { return (text, nil) }
        let host = bytes[..<colon]
        // `[v6]:port`, or a name or IPv4 address with no other colon (a bare IPv6 address has no port).
        if host.first == UInt8(ascii: "["), host.last == UInt8(ascii: "]") {
            return (String(decoding: host, as: UTF8.self), port)
        }
        guard !host.contains(UInt8(ascii: ":")), !host.isEmpty else { return (text, nil) }
        return (String(decoding: host, as: UTF8.self), port)
    }

    /// Whether `host` (already normalized) on `port` matches: a pattern with a port only that port (an unknown
    /// port matches no such pattern).
    func matches(normalizedHost host: String, port: Int?) -> Bool {
        guard self.port == nil || self.port == port else { return false }
        return matches(normalizedHost: host)
    }

    /// Whether this pattern names `host` on `port` exactly.
    func isExact(normalizedHost host: String, port: Int?) -> Bool {
        guard self.port == nil || self.port == port else { return false }
        return isExact(normalizedHost: host)
    }

    /// Whether `host` (already normalized) matches, whatever the port.
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
