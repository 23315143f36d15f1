/// Which origins a fetch may reach: the SSRF guard.
///
/// The policy is applied twice. Before any DNS lookup, the URL's host must match one of
/// ``allowedHosts`` (``check(host:)``). After resolution, every address the client is about to
/// connect to, on every connection and every redirect hop, must be allowed for that host
/// (``isAllowed(address:host:)``), so a DNS answer that changes between the two checks
/// (DNS rebinding) cannot reach a refused address.
///
/// Public unicast addresses are allowed. The others, by ``AddressClass``:
/// - loopback, private, shared (CGNAT) and reserved ranges: allowed when ``allowPrivateNetworks`` is on,
///   or when the host is listed exactly (not through a wildcard) in ``allowedHosts``;
/// - link-local (`169.254.0.0/16`, the cloud metadata service, and `fe80::/10`): allowed only when the host
///   is listed exactly, whatever ``allowPrivateNetworks`` says;
/// - unspecified (`0.0.0.0/8`, `::`), multicast and broadcast: never allowed.
public struct AddressPolicy: Sendable, Hashable {
    /// Host patterns: `example.com` (that host), `example.com:8080` (that port of it only), `*.example.com` (any
    /// name below it), `*` (any host).
    public let allowedHosts: [String]
    /// Whether loopback, RFC 1918, CGNAT, unique-local and reserved addresses are allowed for any allowed host.
    public let allowPrivateNetworks: Bool
    private let patterns: [HostPattern]

    /// Creates a policy.
    /// - Parameters:
    ///   - allowedHosts: host patterns; the default `["*"]` allows any host that resolves to a public address.
    ///   - allowPrivateNetworks: whether private-network addresses are allowed for every allowed host.
    public init(allowedHosts: [String] = ["*"], allowPrivateNetworks: Bool = false) {
        self.allowedHosts = allowedHosts
        self.allowPrivateNetworks = allowPrivateNetworks
        self.patterns = allowedHosts.map(HostPattern.init)
    }

    /// Checks a URL's host against ``allowedHosts``, before any DNS lookup.
    /// - Parameter host: the host name or IP literal of the URL.
    /// - Throws: ``OriginError`` of kind ``OriginError/Kind/refused`` when no pattern matches.
    public func check(host: String) throws(OriginError) {
        try check(host: host, port: nil, url: host)
    }

    /// Checks a URL's host and port against ``allowedHosts``, before any DNS lookup.
    /// - Parameters:
    ///   - host: the host name or IP literal of the URL.
    ///   - port: its port (the scheme's default when it names none).
    /// - Throws: ``OriginError`` of kind ``OriginError/Kind/refused`` when no pattern matches.
    public func check(host: String, port: Int) throws(OriginError) {
        try check(host: host, port: port, url: host)
    }

    /// Whether the client may connect to `address`, which `host` resolved to.
    /// - Parameters:
    ///   - address: the address about to be connected to.
    ///   - host: the host name of the URL being fetched.
    /// - Returns: `true` when both the host and the address are allowed.
    public func isAllowed(address: IPAddress, host: String, port: Int? = nil) -> Bool {
        refusalReason(address: address, host: host, port: port) == nil
    }

    /// Whether `host` (on `port`, when known) matches one of ``allowedHosts``.
    /// - Parameters:
    ///   - host: a host name or IP literal.
    ///   - port: the port; a pattern that names a port matches only it, and no unknown one.
    /// - Returns: `true` when a pattern matches.
    public func allows(host: String, port: Int? = nil) -> Bool {
        // A host written exactly as a pattern's (normalized) name normalizes to that name: no need to normalize it.
        if patterns.contains(where: { $0.isExact(normalizedHost: host, port: port) }) { return true }
        let normalized = HostPattern.normalize(host: host)
        return patterns.contains { $0.matches(normalizedHost: normalized, port: port) }
    }

    /// Whether `host` (on `port`, when known) is listed exactly in ``allowedHosts`` (not matched through a
    /// wildcard).
    /// - Parameters:
    ///   - host: a host name or IP literal.
    ///   - port: the port; a pattern that names a port lists only it.
    /// - Returns: `true` when an exact pattern names it.
    public func isListedExactly(host: String, port: Int? = nil) -> Bool {
        // As in `allows(host:)`: a host written exactly as a pattern's name needs no normalizing.
        if patterns.contains(where: { $0.isExact(normalizedHost: host, port: port) }) { return true }
        let normalized = HostPattern.normalize(host: host)
        return patterns.contains { $0.isExact(normalizedHost: normalized, port: port) }
    }

    /// ``check(host:port:)`` with the URL to name in the error.
    func check(host: String, port: Int?, url: String) throws(OriginError) {
        guard allows(host: host, port: port) else {
            throw .refused(
                url: url,
                reason: "host \(host) is not in the allowed hosts (\(allowedHosts.joined(separator: ", ")))"
            )
        }
    }

    /// Why `address` is refused for `host` (on `port`, when known), or `nil` when it is allowed.
    func refusalReason(address: IPAddress, host: String, port: Int? = nil) -> String? {
        guard allows(host: host, port: port) else {
            return "host \(host) is not in the allowed hosts"
        }
        let addressClass = address.addressClass
        switch addressClass {
        case .publicUnicast:
            return nil
        case .unspecified, .multicast, .broadcast:
            return "\(host) resolved to \(address), a \(addressClass) address, which is never allowed"
        case .linkLocal:
            if isListedExactly(host: host, port: port) { return nil }
            return "\(host) resolved to \(address), a link-local address; list the host exactly to allow it"
        case .loopback, .privateNetwork, .sharedAddressSpace, .reserved:
            if allowPrivateNetworks || isListedExactly(host: host, port: port) { return nil }
            return "\(host) resolved to \(address), a \(addressClass) address; list the host exactly"
                + " or allow private networks"
        }
    }
}
