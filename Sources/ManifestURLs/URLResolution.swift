/// RFC 3986 reference resolution as strings, for manifests other than HLS playlists (DASH MPDs): the same resolver
/// the playlist rewriter uses, so every manifest resolves URLs the same way.
public enum URLResolution {
    /// Resolves `reference` against the absolute URL `base`.
    /// - Parameters:
    ///   - reference: a URI reference as written (absolute, network-path, absolute-path or relative).
    ///   - base: an absolute URL.
    /// - Returns: the target URL, or `nil` when `base` is not absolute or the target is not an `http`/`https` URL
    ///   with a host (such references are left alone by the rewriters).
    public static func resolve(_ reference: String, against base: String) -> String? {
        guard let base = BaseURL(base) else { return nil }
        var output = ByteWriter(capacity: base.bytes.count + reference.utf8.count + 16)
        var reference = reference
        let resolved = reference.withUTF8 { URLResolver.resolve($0, against: base, into: &output) }
        guard resolved != nil else { return nil }
        return String(decoding: output.bytes, as: UTF8.self)
    }
}
