import Foundation
import HLSPlaylist
import ManifestURLs
import OriginClient

/// Turns a request target into the origin URL it stands for.
enum OriginTarget {
    /// The origin URL for `target` (path and query as received): the forward form `/o/<scheme>/<authority>/…`,
    /// or, in reverse mode, `reverseOrigin` followed by the target.
    /// - Returns: `nil` when the target names no origin.
    static func originURL(for target: String, reverseOrigin: String?) -> String? {
        if target.hasPrefix(ProxyURL.pathPrefix) {
            return ProxyURL.origin(fromPath: target)
        }
        guard let reverseOrigin, target.hasPrefix("/") else { return nil }
        return normalizedOrigin(reverseOrigin) + target
    }

    /// The reverse origin without a trailing slash.
    static func normalizedOrigin(_ origin: String) -> String {
        var origin = Substring(origin)
        while origin.hasSuffix("/") { origin = origin.dropLast() }
        return String(origin)
    }

    /// Whether a forward-mode target (`/o/…`) names an origin URL with userinfo (`user:password@host`): such
    /// targets are refused, never forwarded, so that no credential from a request reaches an origin. (A reverse
    /// origin's userinfo is the operator's own configuration.)
    static func isRefusedForward(target: String, origin: String) -> Bool {
        target.hasPrefix(ProxyURL.pathPrefix) && hasUserInfo(origin)
    }

    /// Whether an origin URL carries userinfo.
    static func hasUserInfo(_ url: String) -> Bool {
        guard let schemeEnd = ByteSearch.offset(of: "://", in: url) else { return false }
        let authority = ByteSearch.prefix(of: url, from: schemeEnd + 3, stoppingAt: "/?#")
        return authority.utf8.contains(UInt8(ascii: "@"))
    }

    /// The port of `scheme://authority[/…]`: the one it names, else the scheme's default.
    static func port(of url: String) -> Int {
        let isHTTPS = url.utf8.starts(with: "https:".utf8) || url.lowercased().hasPrefix("https:")
        guard let schemeEnd = ByteSearch.offset(of: "://", in: url) else { return isHTTPS ? 443 : 80 }
        // `scheme://authority`, then the authority alone.
        let origin = ByteSearch.prefix(of: url, from: schemeEnd + 3, stoppingAt: "/?#")
        let authority = String(origin.utf8.dropFirst(schemeEnd + 3))!
        let hostPort = authority.split(separator: "@").last.map(String.init) ?? authority
        guard let colon = hostPort.lastIndex(of: ":"), !hostPort[colon...].contains("]"),
            let port = Int(hostPort[hostPort.index(after: colon)...])
        else { return isHTTPS ? 443 : 80 }
        return port
    }

    /// Whether `url` names this server itself (its listening port on a loopback, unspecified or configured
    /// address), or its path is another `/o/` target (a chain of prefixes through some hlscache): fetching it would
    /// come back here, once per level of the chain.
    static func isLoop(_ url: String, listeningPort: Int, listeningHost: String) -> Bool {
        guard let schemeEnd = ByteSearch.offset(of: "://", in: url) else { return false }
        let origin = ByteSearch.prefix(of: url, from: schemeEnd + 3, stoppingAt: "/?#")
        let rest = url.utf8.dropFirst(origin.utf8.count)
        if rest.starts(with: ProxyURL.pathPrefix.utf8) { return true }
        guard port(of: url) == listeningPort, let host = host(of: url) else { return false }
        let normalized = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if normalized == listeningHost.lowercased() || normalized == "localhost" { return true }
        if let address = IPAddress(normalized) {
            return address.addressClass == .loopback || address.addressClass == .unspecified
        }
        // The other spellings of an IPv4 address the resolver takes (`2130706433`, `127.1`, `0x7f000001`,
        // `0177.0.0.1`): inet_aton reads them all.
        var address = in_addr()
        guard inet_aton(normalized, &address) != 0 else { return false }
        let value = UInt32(bigEndian: address.s_addr)
        return value >> 24 == 127 || value == 0
    }

    /// The host of an origin URL, for the address policy's check before any traffic.
    static func host(of url: String) -> String? {
        guard let components = URLComponents(string: url) else {
            // Targets copied verbatim may hold characters URLComponents refuses; take the authority by hand.
            guard let schemeEnd = url.range(of: "://") else { return nil }
            let authority = url[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
            let hostPort = authority.split(separator: "@").last ?? authority
            if hostPort.hasPrefix("[") { return hostPort.split(separator: "]").first.map { String($0.dropFirst()) } }
            return hostPort.split(separator: ":").first.map(String.init)
        }
        return components.host
    }
}
