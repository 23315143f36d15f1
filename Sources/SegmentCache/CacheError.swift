import ByteRanges

/// An error the cache raises itself, as opposed to one the ``ObjectSource`` threw (those are rethrown as they are).
///
/// Cases are static members so that new ones can be added without breaking users.
/// ``label`` is short and has no associated values, so it is safe as a metric label;
/// ``description`` is the one-line message a person can act on.
public struct CacheError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: String, Sendable, Hashable {
        case disk
        case shortBody = "short_body"
        case longBody = "long_body"
        case rangeOutOfBounds = "range_out_of_bounds"
        case closed
        case memoryBound = "memory_bound"
        case tooManyFills = "too_many_fills"
        case abandoned
    }

    private let code: Code
    /// What happened, for a person to read.
    public let reason: String

    private init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// A short, stable name of the kind of error, safe as a metric label.
    public var label: String { code.rawValue }

    /// The message: `disk error: write /cache/tmp/…: No space left on device (errno 28)`.
    public var description: String { reason }

    /// A system call on the cache directory failed (`ENOSPC`, `EIO`, `EROFS`, …).
    static func disk(_ error: SystemError) -> CacheError {
        CacheError(.disk, "disk error: \(error); check the cache directory's free space, permissions and health")
    }

    /// The origin's body ended before the length it announced.
    static func shortBody(key: CacheKey, received: Int64, announced: Int64) -> CacheError {
        CacheError(.shortBody, "origin body for \(key) ended after \(received) of \(announced) announced bytes")
    }

    /// The origin sent more bytes than it announced.
    static func longBody(key: CacheKey, received: Int64, announced: Int64) -> CacheError {
        CacheError(
            .longBody,
            "origin body for \(key) exceeds its announced length of \(announced) bytes (\(received) received)")
    }

    /// A sub-range read asked for bytes outside the object.
    static func rangeOutOfBounds(_ range: ByteRange, length: Int64, key: CacheKey) -> CacheError {
        CacheError(.rangeOutOfBounds, "range \(range) lies outside the \(length) bytes of \(key)")
    }

    /// A fill whose body went through memory (its temporary file could not be written) outgrew what one fill may
    /// hold there.
    static func memoryBound(key: CacheKey, limit: Int64) -> CacheError {
        CacheError(
            .memoryBound,
            "the body of \(key) went through memory (its temporary file could not be written) and passed the "
                + "\(limit) bytes one fill may hold there; the cache directory's disk needs attention")
    }

    /// ``Configuration/maxFills`` origin fetches are in flight already: this miss is refused (the server answers
    /// 503 with `Retry-After`).
    static func tooManyFills(key: CacheKey, limit: Int) -> CacheError {
        CacheError(
            .tooManyFills,
            "\(limit) origin fetches are in flight already (--max-fills); \(key) was not fetched: try again shortly")
    }

    /// No reader read or waited for a fill for ``Configuration/abandonAfter``: it was stopped, not stored.
    static func abandoned(key: CacheKey, after: Duration) -> CacheError {
        CacheError(.abandoned, "no reader read the fill of \(key) for \(after): stopped, not stored")
    }

    /// The cache was closed.
    static func closed(key: CacheKey) -> CacheError {
        CacheError(.closed, "the cache is closed; cannot serve \(key)")
    }

    /// Whether two errors are of the same kind, whatever their message.
    /// - Parameter other: the error to compare with.
    /// - Returns: `true` when both have the same ``label``.
    public func isSameKind(as other: CacheError) -> Bool { code == other.code }

    /// A disk error, of any `errno`; for matching with ``isSameKind(as:)``.
    public static let diskKind = CacheError(.disk, "disk error")
    /// A short origin body; for matching with ``isSameKind(as:)``.
    public static let shortBodyKind = CacheError(.shortBody, "short body")
    /// A long origin body; for matching with ``isSameKind(as:)``.
    public static let longBodyKind = CacheError(.longBody, "long body")
    /// A sub-range outside the object; for matching with ``isSameKind(as:)``.
    public static let rangeOutOfBoundsKind = CacheError(.rangeOutOfBounds, "range out of bounds")
    /// A fill past its memory bound; for matching with ``isSameKind(as:)``.
    public static let memoryBoundKind = CacheError(.memoryBound, "memory bound")
    /// A miss refused past ``Configuration/maxFills``; for matching with ``isSameKind(as:)``.
    public static let tooManyFillsKind = CacheError(.tooManyFills, "too many fills")
    /// A fill stopped because nobody read it; for matching with ``isSameKind(as:)``.
    public static let abandonedKind = CacheError(.abandoned, "abandoned")
    /// A closed cache; for matching with ``isSameKind(as:)``.
    public static let closedKind = CacheError(.closed, "closed")
}
