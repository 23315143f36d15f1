import Synchronization

extension SegmentCache {
    /// A snapshot of the cache's counters, for metrics and benchmarks.
    public struct Statistics: Sendable, Hashable {
        /// Requests served from a published entry.
        public var hits: Int
        /// Requests that found nothing and started a fill.
        public var misses: Int
        /// Requests that joined a fill already in flight instead of fetching again.
        public var deduplicatedFills: Int
        /// Calls made to the ``ObjectSource``.
        public var originFetches: Int
        /// Fills whose body was published as an entry.
        public var publishedFills: Int
        /// Fills that failed (origin error, short body, cancellation); their requesters' streams failed.
        public var failedFills: Int
        /// Fills served to their requesters without being stored: not cacheable, too large, or a disk error.
        public var passThroughFills: Int
        /// Entries removed to keep the cache within ``Configuration/maxBytes``.
        public var evictions: Int
        /// Entries removed because the cache's file system was full (or nearly), whatever the size bound.
        public var diskFullEvictions: Int
        /// Failed system calls on the cache directory (`ENOSPC`, `EIO`, `EROFS`, …), and corrupt entries found.
        public var diskErrors: Int
        /// Body bytes received from the origin.
        public var originBytes: Int64
        /// Fills (origin fetches) in flight now.
        public var fillsInFlight: Int = 0
        /// Misses refused because ``Configuration/maxFills`` fills were in flight.
        public var fillsRefused: Int = 0
        /// Fills stopped because no reader read them for ``Configuration/abandonAfter``.
        public var abandonedFills: Int = 0
        /// Requests that joined another viewer's fill (another URL, one key), got an answer not kept (a 403 for the
        /// other's token, a 404…) and asked again with their own URL.
        public var refetchedForOwnURL: Int = 0
        /// Entries this process knows of.
        public var entries: Int
        /// Bytes those entries take, headers included.
        public var bytes: Int64
    }

    /// The live counters behind ``Statistics``.
    final class Counters: Sendable {
        let hits = Atomic<Int>(0)
        let misses = Atomic<Int>(0)
        let deduplicatedFills = Atomic<Int>(0)
        let originFetches = Atomic<Int>(0)
        let publishedFills = Atomic<Int>(0)
        let failedFills = Atomic<Int>(0)
        let passThroughFills = Atomic<Int>(0)
        let evictions = Atomic<Int>(0)
        let diskFullEvictions = Atomic<Int>(0)
        /// In a full-disk episode: its start is logged once, and its end.
        let diskFull = Atomic<Bool>(false)
        let diskErrors = Atomic<Int>(0)
        let originBytes = Atomic<Int64>(0)
        let fillsRefused = Atomic<Int>(0)
        let abandonedFills = Atomic<Int>(0)
        let refetchedForOwnURL = Atomic<Int>(0)

        func snapshot(entries: Int, bytes: Int64, fillsInFlight: Int) -> Statistics {
            Statistics(
                hits: hits.load(ordering: .relaxed),
                misses: misses.load(ordering: .relaxed),
                deduplicatedFills: deduplicatedFills.load(ordering: .relaxed),
                originFetches: originFetches.load(ordering: .relaxed),
                publishedFills: publishedFills.load(ordering: .relaxed),
                failedFills: failedFills.load(ordering: .relaxed),
                passThroughFills: passThroughFills.load(ordering: .relaxed),
                evictions: evictions.load(ordering: .relaxed),
                diskFullEvictions: diskFullEvictions.load(ordering: .relaxed),
                diskErrors: diskErrors.load(ordering: .relaxed),
                originBytes: originBytes.load(ordering: .relaxed),
                fillsInFlight: fillsInFlight,
                fillsRefused: fillsRefused.load(ordering: .relaxed),
                abandonedFills: abandonedFills.load(ordering: .relaxed),
                refetchedForOwnURL: refetchedForOwnURL.load(ordering: .relaxed),
                entries: entries,
                bytes: bytes
            )
        }
    }
}

extension Atomic where Value == Int {
    /// Adds one, relaxed: counters are read for metrics only.
    func increment() { add(1, ordering: .relaxed) }
}
