/// The proxy URL form, a reversible pure function pair.
///
/// `https://cdn.example.com:8443/live/a.m3u8?t=1` ↔ `<base>/o/https/cdn.example.com:8443/live/a.m3u8?t=1`.
/// The authority (host, port, IPv6 brackets), path, query and fragment are copied byte for byte, so the last
/// path component (and the file extension) stays readable and nothing needs escaping.
public enum ProxyURL {
    /// The path prefix of proxied URLs.
    public static let pathPrefix = "/o/"

    /// The proxied form of an origin URL.
    /// - Parameters:
    ///   - origin: an absolute `http` or `https` URL with a host.
    ///   - base: the front's base URL (`http://127.0.0.1:8080`), or empty for an absolute-path URL.
    /// - Returns: the proxied URL, or `nil` when `origin` is not an absolute `http`/`https` URL.
    public static func make(origin: String, base: String = "") -> String? {
        let bytes = Array(origin.utf8)
        return bytes.withUnsafeBufferPointer { buffer -> String? in
            let parts = URLReference(buffer, 0..<buffer.count)
            guard let scheme = parts.scheme, URLResolver.isHTTP(buffer, scheme), let authority = parts.authority,
                !authority.isEmpty
            else { return nil }
            let schemeText = String(decoding: buffer[scheme], as: UTF8.self)
            let rest = String(decoding: buffer[authority.lowerBound...], as: UTF8.self)
            return normalizedBase(base) + pathPrefix + schemeText + "/" + rest
        }
    }

    /// The origin URL a proxied request target names.
    /// - Parameter target: the request target, `/o/https/cdn.example.com/live/a.m3u8?t=1`.
    /// - Returns: `https://cdn.example.com/live/a.m3u8?t=1`, or `nil` when the target is not of that form
    ///   (unknown scheme, empty host).
    public static func origin(fromPath target: some StringProtocol) -> String? {
        // Over contiguous bytes: this runs for every request, hits included.
        var text = String(target)
        return text.withUTF8 { origin(fromPathBytes: $0) }
    }

    private static func origin(fromPathBytes bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let slashByte = UInt8(ascii: "/")
        guard bytes.count > 3, bytes[0] == slashByte, bytes[1] == UInt8(ascii: "o"), bytes[2] == slashByte,
            let slash = bytes[3...].firstIndex(of: slashByte)
        else { return nil }
        let scheme = UnsafeBufferPointer(rebasing: bytes[3..<slash])
        guard isHTTPScheme(scheme), slash + 1 < bytes.count else { return nil }
        let first = bytes[slash + 1]
        guard first != slashByte, first != UInt8(ascii: "?"), first != UInt8(ascii: "#") else { return nil }
        return String(decoding: scheme, as: UTF8.self) + "://"
            + String(decoding: UnsafeBufferPointer(rebasing: bytes[(slash + 1)...]), as: UTF8.self)
    }

    /// `http` or `https`, in any case.
    private static func isHTTPScheme(_ scheme: UnsafeBufferPointer<UInt8>) -> Bool {
        let https: StaticString = "https"
        guard scheme.count == 4 || scheme.count == 5 else { return false }
        for index in 0..<scheme.count where scheme[index] | 0x20 != https.utf8Start[index] {
            return false
        }
        return true
    }

    /// The origin URL of a full proxied URL made with `base`.
    /// - Parameters:
    ///   - proxyURL: a URL made by ``make(origin:base:)``.
    ///   - base: the base it was made with.
    /// - Returns: the origin URL, or `nil` when `proxyURL` is not of that form.
    public static func origin(fromProxyURL proxyURL: String, base: String = "") -> String? {
        let prefix = normalizedBase(base)
        guard proxyURL.hasPrefix(prefix) else { return nil }
        return origin(fromPath: proxyURL.dropFirst(prefix.count))
    }

    /// The base without trailing slashes.
    static func normalizedBase(_ base: String) -> String {
        var base = Substring(base)
        while base.hasSuffix("/") { base = base.dropLast() }
        return String(base)
    }
}

/// The custom-scheme form, a reversible pure function pair: `https://…` ↔ `hlscache-https://…`.
///
/// For apps that hand playlists to an AVPlayer resource-loader delegate, which is only asked for URLs whose
/// scheme the player does not know.
public enum CustomSchemeURL {
    /// The prefix put before the origin scheme.
    public static let prefix = "hlscache-"

    /// The custom-scheme form of an origin URL.
    /// - Parameter origin: an absolute `http` or `https` URL.
    /// - Returns: `hlscache-https://…`, or `nil` when `origin` is not an `http`/`https` URL.
    public static func make(origin: String) -> String? {
        let lowered = origin.prefix(8).lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else { return nil }
        return prefix + origin
    }

    /// The origin URL of a custom-scheme URL.
    /// - Parameter url: `hlscache-https://…`.
    /// - Returns: `https://…`, or `nil` when `url` is not of that form.
    public static func origin(from url: String) -> String? {
        guard url.hasPrefix(prefix) else { return nil }
        let origin = String(url.dropFirst(prefix.count))
        return make(origin: origin) == nil ? nil : origin
    }
}
