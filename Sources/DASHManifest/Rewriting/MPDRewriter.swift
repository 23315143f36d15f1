import HLSPlaylist

/// Rewrites every URL a player fetches from an MPD so that it comes back to hlscache, and nothing else.
///
/// The places (ISO/IEC 23009-1 and DASH-IF IOP):
/// - `BaseURL` at every level, each of several: the resolved URL, mapped;
/// - `SegmentTemplate@media/@initialization/@index/@bitstreamSwitching`, `SegmentURL@media/@index`,
///   `Initialization@sourceURL`, `RepresentationIndex@sourceURL`, `BitstreamSwitching@sourceURL`: a relative path
///   under a rewritten `BaseURL` stays as written (it resolves under the mapped base, whichever of several
///   `BaseURL`s the player picks); anything else (absolute, root-relative, with `..`, or with no `BaseURL` above
///   it, so that a redirected MPD's own URL does not matter) is resolved and mapped. Template identifiers
///   (`$Number%05d$`, `$$`…) are kept as written;
/// - `xlink:href`, `Location`, `PatchLocation`, `ContentSteering`: resolved and mapped.
///
/// Left alone: `UTCTiming` (a time source is never answered from a cache), `ContentProtection` and everything in
/// it (DRM license URLs), elements of other namespaces, and every other attribute, comment and namespace.
struct MPDRewriter {
    let mapping: URIMapping

    /// The URL attributes of each DASH element.
    static let urlAttributes: [String: [String]] = [
        "SegmentTemplate": ["media", "initialization", "index", "bitstreamSwitching"],
        "SegmentURL": ["media", "index"],
        "Initialization": ["sourceURL"],
        "RepresentationIndex": ["sourceURL"],
        "BitstreamSwitching": ["sourceURL"],
    ]

    /// Elements whose text is a URL to map.
    static let urlTexts: Set<String> = ["Location", "PatchLocation", "ContentSteering"]

    /// Elements whose subtree is never touched.
    static let untouched: Set<String> = ["UTCTiming", "ContentProtection"]

    /// Rewrites the subtree of `element`.
    /// - Parameters:
    ///   - base: the absolute URL relative references resolve against here.
    ///   - underBaseURL: whether a rewritten `BaseURL` applies here.
    func rewrite(_ element: XMLElement, base: String, underBaseURL: Bool) {
        if let href = element.attribute("href", namespace: XMLElement.xlinkNamespace),
            let mapped = map(href, base: base)
        {
            element.setAttribute("href", namespace: XMLElement.xlinkNamespace, mapped)
        }
        let children = element.children.filter(\.isDASH)
        var base = base
        var underBaseURL = underBaseURL
        var firstBase: String?
        for child in children where child.name == "BaseURL" {
            let written = String(child.text.trimmingSpaces)
            guard let resolved = URLResolution.resolve(written, against: base) else { continue }
            firstBase = firstBase ?? resolved
            if let mapped = mapping.map(resolved) { child.setText(mapped) }
        }
        if let firstBase {
            base = firstBase
            underBaseURL = true
        }
        for name in Self.urlAttributes[element.name] ?? [] {
            guard let written = element.attribute(name) else { continue }
            if underBaseURL, Self.isPlainRelativePath(written) { continue }
            if let mapped = map(written, base: base) { element.setAttribute(name, mapped) }
        }
        for child in children where child.name != "BaseURL" && !Self.untouched.contains(child.name) {
            if Self.urlTexts.contains(child.name) {
                let written = String(child.text.trimmingSpaces)
                if let mapped = map(written, base: base) { child.setText(mapped) }
                continue
            }
            rewrite(child, base: base, underBaseURL: underBaseURL)
        }
    }

    private func map(_ written: String, base: String) -> String? {
        URLResolution.resolve(written, against: base).flatMap(mapping.map)
    }

    /// A relative-path reference with no scheme, no leading `/` and no dot segment: it resolves under whatever
    /// base applies, so under a mapped `BaseURL` it needs no change.
    static func isPlainRelativePath(_ reference: String) -> Bool {
        guard let first = reference.first, first != "/", first != "?", first != "#" else { return false }
        let path = reference.prefix { $0 != "?" && $0 != "#" }
        if let colon = path.firstIndex(of: ":"), !path[..<colon].contains("/") { return false }
        return !path.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == ".." || $0 == "." }
    }
}
