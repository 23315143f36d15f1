import Foundation
import HTTPTypes
import OriginCache
import SegmentCache

/// What the hit path does with a request it cannot answer at once: the fill it starts before the responder takes
/// the request over, the fill an LL-HLS blocking reload parks on, and the rendering a parked request waits for.
extension Answer {
    /// The key of the fill `request` can wait for on the event loop: an LL-HLS blocking playlist reload (GET, no
    /// range) whose answer will be a rendering, the same key a fill is then in flight for (the caller checks). Its
    /// answer, once that fill ends, is then a hit like any other.
    static func joinableFill(of request: HitRequest, components: ServerComponents) -> CacheKey? {
        guard request.method == .get, request.range == nil, BlockingReload.isBlockingReload(request.target) else {
            return nil
        }
        return originRequest(of: request, components: components)?.key
    }

    /// The key the responder will fetch for `request` when the hit path left it a miss: a GET of an origin object.
    /// The caller starts its fill unless one is in flight or the cache holds an entry of it (whose fate, stale or
    /// not, is the responder's to decide).
    static func fillToStart(for request: HitRequest, components: ServerComponents) -> CacheKey? {
        guard request.method == .get else { return nil }
        return originRequest(of: request, components: components)?.key
    }

    /// The key and version of the playlist `request` asks for when its fresh copy is published but its rendering
    /// is not kept yet (its fill just ended; the request that started it is rendering it): what a parked request
    /// waits for next, rather than go to the responder and render it again. Counts no hit.
    static func pendingRendering(
        of request: HitRequest, components: ServerComponents
    ) -> (key: CacheKey, fetchedAt: Date)? {
        guard let key = originRequest(of: request, components: components)?.key else { return nil }
        var version: Date?
        _ = components.cache.publishedResponse(for: key) { metadata in
            if (200..<300).contains(metadata.status), metadata.objectKind.isManifest,
                components.memory.playlists.rendering(of: key, fetchedAt: metadata.fetchedAt) == nil
            {
                version = metadata.fetchedAt
            }
            return false
        }
        return version.map { (key, $0) }
    }

    /// `request` resolved, when it asks for an origin object for itself: not a fleet child's request for a stored
    /// copy (`Via`), not a read-ahead.
    private static func originRequest(
        of request: HitRequest, components: ServerComponents
    ) -> RequestResolution.OriginRequest? {
        guard
            case .origin(let resolved) = RequestResolution(
                method: request.method, target: request.target, range: request.range, via: request.via,
                isReadAhead: request.isReadAhead, components: components),
            !resolved.isReadAhead, !resolved.asStored
        else { return nil }
        return resolved
    }
}
