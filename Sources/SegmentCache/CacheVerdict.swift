/// What the cache does for a request of a key, decided and counted in one step under its lock
/// (``SegmentCache/lookup(_:freshness:start:refreshingStored:)``), as groupcache's `Get` and Varnish's `HSH_Lookup`
/// decide: a published entry serves it, or a fill does (one in flight, joined, or one started by the lookup).
public enum CacheVerdict: Sendable {
    /// A published entry serves it (counted as a hit).
    case hit(CacheResponse)
    /// A fill serves it: joined (counted as deduplicated) or started by this lookup (counted as its miss).
    case fill(CacheFill)
    /// An entry of the key is known but does not serve at the freshness asked for (an expired one), and the lookup
    /// was told not to refresh it: the caller decides (a stale copy within grace, then a fetch). Counted as nothing.
    case stored
}

/// How a lookup that finds nothing starts its fill.
public enum FillStart: Sendable {
    /// On a task of the concurrency pool.
    case task
    /// At once, on the caller's thread until the fill first waits (for the origin's answer): the origin request is
    /// with the origin client before the lookup returns. The fill goes on on `executorPreference` once the origin
    /// answers (the caller's event loop, where the requester waits), on the global executor when `nil`. Call it from
    /// no lock.
    case immediate(executorPreference: (any TaskExecutor)?)
}

/// A fill serving a request: one in flight the lookup joined, or one it started. Its response arrives with the
/// origin's head; the body streams as it downloads, and the fill goes on if the reader stops (the next request's
/// hit).
public struct CacheFill: Sendable {
    let flight: Flight
    let chunkSize: Int
    /// Whether the lookup started it (its request is the miss); otherwise it joined another request's fill.
    public let leads: Bool
    /// Whether it fetches another URL than the request's own: another viewer's, when their tokens are left out of
    /// keys (``CacheKey/fetchURL``).
    public let fetchesOtherURL: Bool

    /// Waits for the origin's head.
    /// - Returns: the response: a hit when the fill found the entry another process published, the miss when it
    ///   leads, joined otherwise.
    /// - Throws: the ``ObjectSource``'s error when the origin fails before answering; `CancellationError`.
    public func response() async throws -> CacheResponse {
        let head = try await flight.head()
        let disposition: CacheResponse.Disposition = head.isFromStore ? .hit : leads ? .miss : .joined
        return CacheResponse(
            disposition: disposition, metadata: head.metadata, isStored: head.isStored,
            upstreamCache: head.upstreamCache, source: .flight(flight), start: 0, chunkSize: chunkSize)
    }
}
