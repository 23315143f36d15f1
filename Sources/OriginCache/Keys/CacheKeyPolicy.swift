import ByteRanges
import Foundation
import SegmentCache

/// Which query parameters the cache leaves out of its keys (`--cache-key-ignore-query`,
/// `--playlist-cache-key-ignore-query`): the one place that turns an origin URL into a ``CacheKey``, used by the
/// server's request resolution, its playlist rendering and read-ahead, and by `hlscache prefetch`.
///
/// Signed URLs give every viewer a URL of their own (`seg1.ts?token=…`); a key on the whole URL never hits. A
/// parameter named here is dropped from the key's ``CacheKey/url`` while the origin request keeps the full URL
/// (``CacheKey/fetchURL``), so viewers with different tokens share one cached object, and the first viewer's
/// request is the one the origin sees. Manifests (by their `.m3u8`, `.m3u` or `.mpd` path) follow their own list,
/// as tokens often must stay on playlists. LL-HLS directives (`_HLS_…`) are never dropped.
public struct CacheKeyPolicy: Sendable, Equatable {
    /// Parameter name patterns dropped from the keys of objects that are not manifests.
    public var ignoredQuery: [QueryNamePattern]
    /// Parameter name patterns dropped from the keys of manifests.
    public var ignoredManifestQuery: [QueryNamePattern]

    /// Creates a policy.
    /// - Parameters:
    ///   - ignoredQuery: patterns for segments, keys and other objects.
    ///   - ignoredManifestQuery: patterns for playlists and MPDs.
    public init(ignoredQuery: [QueryNamePattern] = [], ignoredManifestQuery: [QueryNamePattern] = []) {
        self.ignoredQuery = ignoredQuery
        self.ignoredManifestQuery = ignoredManifestQuery
    }

    /// Whether every key is the whole URL.
    public var keepsWholeURLs: Bool { ignoredQuery.isEmpty && ignoredManifestQuery.isEmpty }

    /// The key of the object at `url` (or of bytes `range` of it), fetched from `url` itself.
    public func key(for url: String, range: ByteRange? = nil) -> CacheKey {
        CacheKey(url: identity(of: url), range: range, fetchURL: url)
    }

    /// The key a request for `url` asks for (see ``CacheKey/init(origin:requested:fetchURL:)``).
    public func key(origin url: String, requested: RequestedRange?) -> CacheKey {
        CacheKey(origin: identity(of: url), requested: requested, fetchURL: url)
    }

    /// `url` without the query parameters the policy drops for its kind (the query's other parameters keep their
    /// order and spelling; a query left empty goes, `?` included), in one spelling (``URLKeyForm``): scheme and host
    /// in lowercase, no default port, no empty path segment. So one object has one key however a request spells
    /// it, and a purge of one spelling removes it.
    public func identity(of url: String) -> String {
        let url = URLKeyForm.normalized(url)
        if keepsWholeURLs { return url }
        guard let question = url.utf8.firstIndex(of: UInt8(ascii: "?")) else { return url }
        let patterns = ObjectKind.guess(url: url).isManifest ? ignoredManifestQuery : ignoredQuery
        if patterns.isEmpty { return url }
        let query = url[url.index(after: question)...]
        let fragment = query.firstIndex(of: "#")
        let parameters = query[..<(fragment ?? query.endIndex)].split(separator: "&", omittingEmptySubsequences: false)
        let kept = parameters.filter { parameter in
            let name = parameter.prefix { $0 != "=" }
            if name.hasPrefix("_HLS_") { return true }
            return !patterns.contains { $0.matches(name) }
        }
        if kept.count == parameters.count { return url }
        var result = String(url[..<question])
        if !kept.isEmpty { result += "?" + kept.joined(separator: "&") }
        if let fragment { result += query[fragment...] }
        return result
    }
}

/// A query parameter name pattern: a name (`token`), or a name with `*` standing for any run of characters
/// (`X-Amz-*`, `*sig*`, `*`). Case-sensitive, compared with the name as it appears in the URL.
public struct QueryNamePattern: Sendable, Equatable, CustomStringConvertible {
    /// The pattern as given.
    public let text: String
    private let pieces: [Substring]

    /// Parses a pattern.
    /// - Throws: ``InvalidQueryNamePattern`` for an empty pattern or one holding `&`, `=`, `?` or `#`.
    public init(_ text: String) throws(InvalidQueryNamePattern) {
        guard !text.isEmpty, !text.contains(where: { "&=?# ".contains($0) }) else {
            throw InvalidQueryNamePattern(text: text)
        }
        self.text = text
        pieces = text.split(separator: "*", omittingEmptySubsequences: false)
    }

    /// Whether `name` matches.
    public func matches(_ name: Substring) -> Bool {
        guard pieces.count > 1 else { return name == pieces[0] }
        var rest = name[...]
        guard rest.hasPrefix(pieces[0]) else { return false }
        rest = rest.dropFirst(pieces[0].count)
        for piece in pieces.dropFirst().dropLast() where !piece.isEmpty {
            guard let found = rest.range(of: piece) else { return false }
            rest = rest[found.upperBound...]
        }
        let last = pieces[pieces.count - 1]
        return rest.count >= last.count && rest.hasSuffix(last)
    }

    /// The pattern as given.
    public var description: String { text }
}

/// A `--cache-key-ignore-query` pattern that cannot be used.
public struct InvalidQueryNamePattern: Error, CustomStringConvertible {
    /// The pattern given.
    public let text: String

    /// What is wrong and what to give instead.
    public var description: String {
        "query parameter pattern '\(text)' is empty or holds '&', '=', '?', '#' or a space; give a name such as "
            + "token or a pattern such as X-Amz-*"
    }
}
