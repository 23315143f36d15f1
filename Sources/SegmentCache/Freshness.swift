import Foundation

extension SegmentCache {
    /// Which cached entries a request accepts.
    public enum Freshness: Sendable, Hashable {
        /// Any entry, expired or not: for immutable objects such as media segments.
        case any
        /// Only an entry whose expiry has not passed (by the cache's clock); otherwise fetch again,
        /// sharing the fetch with concurrent requests. For playlists. When that fetch fails, the server
        /// can fall back on ``SegmentCache/staleEntry(for:)``.
        case fresh
        /// An entry whose expiry has not passed, or one fetched at or after this date (by the cache's clock): what a
        /// request that waited for a fill takes, the version it waited for, even when that version's short freshness
        /// (an LL-HLS blocking reload's) has passed since.
        case fetchedSince(Date)
    }
}
