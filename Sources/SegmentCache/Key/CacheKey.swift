import ByteRanges

/// What identifies a cached object: the resolved origin URL and, for a ranged object, its byte range.
///
/// An `EXT-X-BYTERANGE` segment is its own object, keyed by the URL of the file it lives in and
/// its range. A request whose range lies inside a cached object is served from that object
/// (see ``SegmentCache/fetch(_:freshness:)``). The key is only ever hashed to name a file:
/// no part of it becomes a path.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The absolute origin URL, after playlist resolution.
    public let url: String
    /// The bytes of the object at `url` this key stands for, or `nil` for the whole object.
    public let range: ByteRange?

    /// Creates a key.
    /// - Parameters:
    ///   - url: the absolute origin URL.
    ///   - range: the byte range of a ranged object, or `nil` for the whole object.
    public init(url: String, range: ByteRange? = nil) {
        self.url = url
        self.range = range
    }

    /// The key of the whole object this key's URL names.
    public var wholeObject: CacheKey { CacheKey(url: url) }

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
    ///   - origin: the origin URL.
    ///   - requested: the request's range, if any.
    public init(origin: String, requested: RequestedRange?) {
        if let range = requested?.closedBytes {
            self.init(url: origin, range: range)
        } else {
            self.init(url: origin)
        }
    }
}
