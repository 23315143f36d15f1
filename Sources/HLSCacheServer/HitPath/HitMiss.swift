import Foundation
import HTTPTypes
import NIOCore
import OriginCache
import RequestHeads
import SegmentCache

/// What the hit path does with a request it cannot answer at once: the fill it starts before the plan takes
/// the request over, whether the request may park on that fill, and the rendering a parked request waits for.
extension Answer {
    /// The object (its ``RequestResolution/ProxiedObject/key``) the plan will fetch for `request` (routed to
    /// `resolved`, ``route(_:resolution:record:components:)``) when the hit path left it a miss: a GET of an origin object for the requester itself (not a
    /// fleet child's request for a stored copy, `Via`; not a read-ahead). The caller starts its fill unless one is in
    /// flight or the cache holds an entry of it (whose fate, stale or not, is the plan's to decide), and may
    /// park the request on it (``mayPark(_:)``), to be answered with
    /// ``init(hitFor:resolved:components:canSendFile:arrivedAt:batch:)``.
    static func fillToStart(
        for request: ExchangeRequest, resolved: RequestResolution.ProxiedObject
    ) -> RequestResolution.ProxiedObject? {
        guard request.method == .get, !resolved.isReadAhead, !resolved.asStored else { return nil }
        return resolved
    }

    /// The cache's verdict for `resolved`, whose hit the caller has just looked for, looked up from the event loop a
    /// request of it arrived on (``SegmentCache/lookup(_:freshness:start:refreshingStored:hitLookedFor:)``): a fill
    /// it starts leaves for the origin now and
    /// goes on on that loop once the origin answers, to wake the request there. An entry the cache knows (an expired
    /// one, in grace or not) is left to ``Answer/origin(_:record:components:verdict:)``, which decides about it.
    /// - Returns: the verdict (or the refusal past `--max-fills`), or `nil` for a stored entry: the caller hands the
    ///   request on.
    static func lookUp(
        _ resolved: RequestResolution.ProxiedObject, on eventLoop: any EventLoop, components: ServerComponents
    ) -> Result<CacheVerdict, CacheError>? {
        let verdict = Result { () throws(CacheError) in
            try components.cache.lookup(
                resolved.fetchKey, freshness: .fresh,
                start: .immediate(executorPreference: EventLoopTaskExecutor(eventLoop)),
                refreshingStored: false, hitLookedFor: true)
        }
        if case .success(.stored) = verdict { return nil }
        if case .success(.fill(let fill)) = verdict, fill.leads { components.metrics.eventLoopFillStarted() }
        return verdict
    }

    /// Whether a request with a ``fillToStart(for:resolved:)`` key may wait on the event loop for that fill: an
    /// LL-HLS blocking playlist reload without a range, whose answer will be a rendering. Its answer, once the fill
    /// ends, is then a hit like any other.
    static func mayPark(_ request: ExchangeRequest) -> Bool {
        request.range == nil && BlockingReload.isBlockingReload(request.target)
    }

    /// The version of the playlist under `key` when its fresh copy is published but its rendering is not kept yet (its
    /// fill just ended; the request that started it is rendering it): what a parked request waits for next, rather
    /// than go to the responder and render it again. Counts no hit.
    static func pendingRendering(of key: CacheKey, components: ServerComponents) -> Date? {
        var version: Date?
        _ = components.cache.publishedResponse(for: key) { metadata in
            if (200..<300).contains(metadata.status), metadata.objectKind.isManifest,
                components.memory.playlists.rendering(of: key, fetchedAt: metadata.fetchedAt) == nil
            {
                version = metadata.fetchedAt
            }
            return false
        }
        return version
    }
}
