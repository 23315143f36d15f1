import Foundation
import HLSPlaylist

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
