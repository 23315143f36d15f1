import HLSPlaylist
import ManifestURLs

/// The URIs players are given for origin URLs: the one mapping that rewritten manifests use, and that fleet
/// read-ahead uses to ask for a segment exactly as a player will.
enum PlayerURIs {
    /// Proxy URLs for every URI; in reverse mode, the origin's own URLs become plain paths on hlscache.
    /// - Parameters:
    ///   - configuration: the reverse origin, if any.
    ///   - base: what goes in front of each path (the public base URL, or empty for absolute paths).
    static func mapping(_ configuration: ServerConfiguration, base: String) -> URIMapping {
        guard let reverse = configuration.reverseOrigin else { return .proxy(base: base) }
        let origin = OriginTarget.normalizedOrigin(reverse)
        let publicBase = ProxyURLBase.normalized(base)
        return .custom { url in
            if url.hasPrefix(origin), url.dropFirst(origin.count).first == "/" {
                return publicBase + url.dropFirst(origin.count)
            }
            return ProxyURL.make(origin: url, base: base)
        }
    }
}
