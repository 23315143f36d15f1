import NIOCore
import SegmentCache
import Synchronization

/// Runs wake-ups of parked requests on their event loops in batches: the end of a fill a thousand LL-HLS players
/// wait for queues a thousand wake-ups, and each event loop is handed its share in one task, not one task (and one
/// contended lock of the loop's task queue) per request.
final class EventLoopWakeUps: Sendable {
    /// The wake-ups queued for each event loop and not yet taken by its batch.
    private let pending = Mutex<[ObjectIdentifier: [@Sendable (WakeBatch) -> Void]]>([:])

    /// Runs `wakeUp` on `eventLoop`, after the wake-ups queued for it before, in order, with what its batch shares.
    /// - Parameters:
    ///   - eventLoop: where to run it.
    ///   - wakeUp: what to run; it must not block.
    func schedule(on eventLoop: any EventLoop, _ wakeUp: @escaping @Sendable (WakeBatch) -> Void) {
        let loop = ObjectIdentifier(eventLoop)
        let first = pending.withLock { pending in
            let first = pending[loop, default: []].isEmpty
            pending[loop, default: []].append(wakeUp)
            return first
        }
        // The loop's batch takes everything queued until it runs: one task per batch.
        if first { eventLoop.execute { self.runBatch(of: loop) } }
    }

    /// Runs the wake-ups queued for one loop, on it.
    private func runBatch(of loop: ObjectIdentifier) {
        let wakeUps = pending.withLock { pending in pending.removeValue(forKey: loop) ?? [] }
        let batch = WakeBatch()
        for wakeUp in wakeUps { wakeUp(batch) }
    }
}

/// What the wake-ups of one batch share, on their event loop: the playlist hits planned in it, by key, so that the
/// thousand requests parked on one LL-HLS part look their playlist up once, not once each. The batch lasts as long
/// as its run: the version it holds is the one the fill that woke them published.
final class WakeBatch {
    /// The published version's metadata and its rendering, for each playlist answered in this batch.
    var playlistHits: [CacheKey: (metadata: EntryMetadata, rendered: RenderedPlaylist)] = [:]
}
