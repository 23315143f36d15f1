import NIOCore
import Synchronization

/// Runs wake-ups of parked requests on their event loops in batches: the end of a fill a thousand LL-HLS players
/// wait for queues a thousand wake-ups, and each event loop is handed its share in one task, not one task (and one
/// contended lock of the loop's task queue) per request.
final class EventLoopWakeUps: Sendable {
    /// The wake-ups queued for each event loop and not yet taken by its batch.
    private let pending = Mutex<[ObjectIdentifier: [@Sendable () -> Void]]>([:])

    /// Runs `wakeUp` on `eventLoop`, after the wake-ups queued for it before, in order.
    /// - Parameters:
    ///   - eventLoop: where to run it.
    ///   - wakeUp: what to run; it must not block.
    func schedule(on eventLoop: any EventLoop, _ wakeUp: @escaping @Sendable () -> Void) {
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
        let batch = pending.withLock { pending in pending.removeValue(forKey: loop) ?? [] }
        for wakeUp in batch { wakeUp() }
    }
}
