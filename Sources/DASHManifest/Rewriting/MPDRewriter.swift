import ManifestURLs

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
    /// The longest URL written, and how much the document may grow (``RewriteLimits``, as for playlists).
    let limits: RewriteLimits
    /// How many bytes the document may grow by in all.
    let maxGrowth: Int
    /// How many it has grown by.
    private(set) var growth = 0

    /// A rewriter for a document of `inputBytes` bytes: its output may be at most what ``RewriteLimits`` allows a
    /// playlist of that size with one URL place per 64 bytes.
    init(mapping: URIMapping, inputBytes: Int, limits: RewriteLimits = .default) {
        self.mapping = mapping
        self.limits = limits
        let bound = limits.maxOutputBytes(inputBytes: inputBytes, uriPlaces: inputBytes / 64 + 1)
        self.maxGrowth = max(0, bound - inputBytes)
    }

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
    /// - Throws: ``MPDError`` (`tooLarge`) when a URL written would be longer than ``RewriteLimits/maxURIBytes`` or
    ///   the document would grow past its bound.
    mutating func rewrite(_ element: XMLElement, base: String, underBaseURL: Bool) throws(MPDError) {
        if let href = element.attribute("href", namespace: XMLElement.xlinkNamespace),
            let mapped = try map(href, base: base, line: element.line)
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
            try account(written: written, resolved, line: child.line)
            firstBase = firstBase ?? resolved
            if let mapped = mapping.map(resolved) {
                try account(written: written, mapped, line: child.line)
                child.setText(mapped)
            }
        }
        if let firstBase {
            base = firstBase
            underBaseURL = true
        }
        for name in Self.urlAttributes[element.name] ?? [] {
            guard let written = element.attribute(name) else { continue }
            if underBaseURL, Self.isPlainRelativePath(written) { continue }
            if let mapped = try map(written, base: base, line: element.line) { element.setAttribute(name, mapped) }
        }
        for child in children where child.name != "BaseURL" && !Self.untouched.contains(child.name) {
            if Self.urlTexts.contains(child.name) {
                let written = String(child.text.trimmingSpaces)
                if let mapped = try map(written, base: base, line: child.line) { child.setText(mapped) }
                continue
            }
            try rewrite(child, base: base, underBaseURL: underBaseURL)
        }
    }

    private mutating func map(_ written: String, base: String, line: Int) throws(MPDError) -> String? {
        guard let mapped = URLResolution.resolve(written, against: base).flatMap(mapping.map) else { return nil }
        try account(written: written, mapped, line: line)
        return mapped
    }

    /// Counts what writing `url` in place of `written` adds, and refuses a URL or a document past the limits. A
    /// resolved base is counted too: a chain of relative `BaseURL`s grows with each level even where the mapping
    /// leaves it.
    private mutating func account(written: String, _ url: String, line: Int) throws(MPDError) {
        let length = url.utf8.count
        guard length <= limits.maxURIBytes else {
            throw MPDError(
                .tooLarge, "a URL would be \(length) bytes, over the limit of \(limits.maxURIBytes)", line: line)
        }
        growth += max(0, length - written.utf8.count)
        guard growth <= maxGrowth else {
            throw MPDError(.tooLarge, "the rewritten MPD would grow by more than \(maxGrowth) bytes", line: line)
        }
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
