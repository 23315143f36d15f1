import Foundation

/// What the cache knows about an object besides its bytes: the origin's answer and the cache's timestamps.
public struct EntryMetadata: Sendable, Hashable {
    /// The key the object is stored under (for a sub-range served from a larger object, the request's key).
    public var key: CacheKey
    /// The origin's HTTP status: 2xx for stored entries, anything for a pass-through answer.
    public var status: Int
    /// The origin's `Content-Type`.
    public var contentType: String?
    /// The body's length in bytes; `nil` while a fill whose origin announced no length is still running.
    public var contentLength: Int64?
    /// The origin's `ETag`.
    public var etag: String?
    /// The origin's `Last-Modified`, as sent.
    public var lastModified: String?
    /// When the cache received the origin's answer.
    public var fetchedAt: Date
    /// When the entry stops being fresh, or `nil` when it never does (segments).
    public var expiry: Date?
    /// For a ranged key, the length of the whole object the range is part of (from the origin's
    /// `Content-Range`), when known; for a whole object, `nil` (``contentLength`` is the whole length).
    public var completeLength: Int64?
    /// What the filler decided the object is, stored with it so that readers ask the entry instead of deciding
    /// again: an opaque tag to the cache (its meaning belongs to the filler); 0 when none was given.
    public var kind: UInt8
    /// The URL the origin answered from when it differs from the key's (the end of a redirect): what relative
    /// references in the object resolve against. `nil`: the key's URL.
    public var baseURL: String?

    /// Creates metadata.
    /// - Parameters:
    ///   - key: the key.
    ///   - status: the origin's HTTP status.
    ///   - contentType: the origin's `Content-Type`.
    ///   - contentLength: the body length, if known.
    ///   - etag: the origin's `ETag`.
    ///   - lastModified: the origin's `Last-Modified`.
    ///   - fetchedAt: when the answer was received.
    ///   - expiry: when the entry stops being fresh.
    ///   - completeLength: for a ranged key, the whole object's length.
    ///   - kind: what the filler decided the object is (0: not said).
    ///   - baseURL: the URL the origin answered from, when it differs from the key's.
    public init(
        key: CacheKey,
        status: Int,
        contentType: String? = nil,
        contentLength: Int64? = nil,
        etag: String? = nil,
        lastModified: String? = nil,
        fetchedAt: Date,
        expiry: Date? = nil,
        completeLength: Int64? = nil,
        kind: UInt8 = 0,
        baseURL: String? = nil
    ) {
        self.key = key
        self.status = status
        self.contentType = contentType
        self.contentLength = contentLength
        self.etag = etag
        self.lastModified = lastModified
        self.fetchedAt = fetchedAt
        self.expiry = expiry
        self.completeLength = completeLength
        self.kind = kind
        self.baseURL = baseURL
    }

    /// Whether the entry is stale at `now`: it has an expiry and that moment has come.
    /// - Parameter now: the time to judge at, from the cache's clock.
    /// - Returns: `true` when `expiry` is at or before `now`.
    public func isExpired(at now: Date) -> Bool {
        guard let expiry else { return false }
        return expiry <= now
    }
}
