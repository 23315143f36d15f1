import ByteRanges

/// What identifies a cached object: the resolved origin URL and, for a ranged object, its byte range.
///
/// An `EXT-X-BYTERANGE` segment is its own object, keyed by the URL of the file it lives in and
/// its range. A request whose range lies inside a cached object is served from that object
/// (see ``SegmentCache/fetch(_:freshness:)``). The key is only ever hashed to name a file:
/// no part of it becomes a path.
///
/// A key may be fetched from a URL other than the one that identifies it (``fetchURL``): the same URL with a
/// viewer's token in its query, when the operator told the cache to leave such parameters out of its keys. Two
/// keys are equal when their ``url`` and ``range`` are, whatever URL they are fetched from.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The absolute origin URL, after playlist resolution: what identifies the object.
    public let url: String
    /// The bytes of the object at `url` this key stands for, or `nil` for the whole object.
    public let range: ByteRange?
    /// The URL the object is fetched from: ``url`` itself, or ``url`` with the query parameters the key leaves
    /// out. Never stored, never part of the key's identity.
    public let fetchURL: String
    /// What the request that made this key adds to the origin request of a fill it starts (the player's CMCD, with
    /// `--cmcd-to-origin`): never part of the key's identity, never stored.
    public private(set) var originAdditions: OriginAdditions?

    /// Creates a key.
    /// - Parameters:
    ///   - url: the absolute origin URL.
    ///   - range: the byte range of a ranged object, or `nil` for the whole object.
    ///   - fetchURL: the URL to fetch the object from, when it is not `url`.
    public init(url: String, range: ByteRange? = nil, fetchURL: String? = nil) {
        self.url = url
        self.range = range
        self.fetchURL = fetchURL ?? url
    }

    /// The key of the whole object this key's URL names, fetched from the same URL.
    public var wholeObject: CacheKey {
        var whole = CacheKey(url: url, fetchURL: fetchURL)
        whole.originAdditions = originAdditions
        return whole
    }

    /// This key without its ``originAdditions``: what an entry keeps.
    public var withoutOriginAdditions: CacheKey {
        guard originAdditions != nil else { return self }
        return CacheKey(url: url, range: range, fetchURL: fetchURL)
    }

    /// This key, with `additions` for the origin request of a fill it starts.
    public func adding(_ additions: OriginAdditions) -> CacheKey {
        var key = self
        key.originAdditions = additions
        return key
    }

    /// Whether two keys name the same object (their ``url`` and ``range``).
    public static func == (lhs: CacheKey, rhs: CacheKey) -> Bool {
        lhs.url == rhs.url && lhs.range == rhs.range
    }

    /// Hashes what identifies the object (``url`` and ``range``).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(range)
    }

    /// The URL, followed by the range when there is one: `https://o/seg.ts [1024+512]`.
    public var description: String {
        guard let range else { return url }
        return "\(url) [\(range)]"
    }
}

extension CacheKey {
    /// The cache object a request for `origin` asks for: a closed range `a-b` is an object of its own (an
    /// `EXT-X-BYTERANGE` segment); open and suffix ranges are cut from the whole object.
    /// - Parameters:
    ///   - origin: the origin URL that identifies the object.
    ///   - requested: the request's range, if any.
    ///   - fetchURL: the URL to fetch the object from, when it is not `origin`.
    public init(origin: String, requested: RequestedRange?, fetchURL: String? = nil) {
        self.init(url: origin, range: requested?.closedBytes, fetchURL: fetchURL)
    }
}

/// What one request adds to the origin request of a fill it starts, beside its key's URL (``CacheKey/originAdditions``):
/// a player's CMCD, passed on with `--cmcd-to-origin`. A class: a key carries a reference, not the fields.
public final class OriginAdditions: Sendable {
    /// A query parameter (`name=value`, as the player wrote it) appended to the URL fetched.
    public let queryParameter: String?
    /// Fields sent with the request.
    public let fields: [(name: String, value: String)]

    /// Creates the additions.
    /// - Parameters:
    ///   - queryParameter: a `name=value` query parameter to append to the URL fetched.
    ///   - fields: request fields to send.
    public init(queryParameter: String? = nil, fields: [(name: String, value: String)] = []) {
        self.queryParameter = queryParameter
        self.fields = fields
    }

    /// `url` with ``queryParameter`` appended (after `&` when it has a query, `?` otherwise).
    public func url(_ url: String) -> String {
        guard let queryParameter else { return url }
        return url + (url.utf8.contains(UInt8(ascii: "?")) ? "&" : "?") + queryParameter
    }
}
