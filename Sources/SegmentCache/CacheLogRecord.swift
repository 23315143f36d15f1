/// One thing worth logging that happened inside the cache; the server forwards these to swift-log.
///
/// The cache has no logging dependency; ``SegmentCache/Configuration/log`` receives these.
/// Nothing on the happy path is logged above ``Level-swift.enum/debug``.
public struct CacheLogRecord: Sendable, CustomStringConvertible {
    /// How much attention a record deserves.
    public enum Level: String, Sendable, Hashable {
        /// Routine events: a fill started, published, an entry evicted.
        case debug
        /// Something went wrong but the cache carried on: a disk error, a corrupt entry removed.
        case warning
    }

    /// How much attention the record deserves.
    public let level: Level
    /// What happened, for a person to read.
    public let message: String
    /// The key concerned, when there is one.
    public let key: CacheKey?
    /// The error, when the record reports one.
    public let error: CacheError?

    /// `warning: disk error: … (key https://o/seg.ts)`.
    public var description: String {
        var text = "\(level.rawValue): \(message)"
        if let key { text += " (key \(key))" }
        return text
    }
}
