import Logging
import SegmentCache
import Synchronization

/// Background read-ahead: fetches segments players are about to ask for through the cache's single flight,
/// a few at a time, or, in a fleet, asks the node that owns each one to (``FleetReadAhead``).
///
/// Keys already queued, running, or read ahead recently are skipped, so N players serving the same live
/// playlist queue its newest segments once. The queue is bounded; keys beyond it are dropped (the player's
/// own request will fetch them).
final class ReadAhead: Sendable {
    private struct State {
        var queue: [CacheKey] = []
        var queued: Set<CacheKey> = []
        var running = 0
        var recent = ClockMap<CacheKey, Void>(capacity: 4096)
    }

    /// Where a read-ahead fetch goes.
    enum Delivery: Sendable {
        /// Into this node's cache.
        case local(SegmentCache)
        /// To the node of the fleet that owns the key.
        case fleet(FleetReadAhead)
    }

    private let delivery: Delivery
    private let concurrency: Int
    private let logger: Logger
    private let maxQueued = 256
    private let state = Mutex(State())

    init(_ delivery: Delivery, concurrency: Int, logger: Logger) {
        self.delivery = delivery
        self.concurrency = max(1, concurrency)
        self.logger = logger
    }

    /// How long the read-ahead of a new live playlist version waits before it fetches: its newest segments, and the
    /// segments its live history records. The players its fill woke are answered first: a thousand parked LL-HLS
    /// blocking reloads take an event loop some 20 ms, and the fetches (origin transfers, entries written and synced,
    /// on the same processors) made the last of them some 4 ms later on a 2-core machine (`bench/PROFILES.md`). A
    /// player asks for those segments only once it has read the playlist; one that does first starts their fill.
    static let liveVersionDelay: Duration = .milliseconds(50)

    /// Queues `keys` for fetching, in order.
    /// - Parameter delay: how long the fetches this starts wait before they do (``liveVersionDelay``); those that
    ///   follow in the queue start as these end.
    func enqueue(_ keys: [CacheKey], after delay: Duration = .zero) {
        guard !keys.isEmpty else { return }
        let starts = state.withLock { state -> [CacheKey] in
            for key in keys where !state.queued.contains(key) && !state.recent.contains(key) {
                guard state.queue.count < maxQueued else { break }
                state.queue.append(key)
                state.queued.insert(key)
            }
            var starts: [CacheKey] = []
            while state.running < concurrency, !state.queue.isEmpty {
                starts.append(state.queue.removeFirst())
                state.running += 1
            }
            return starts
        }
        for key in starts { start(key, after: delay) }
    }

    private func start(_ key: CacheKey, after delay: Duration = .zero) {
        Task.detached { [self] in
            if delay > .zero { try? await Task.sleep(for: delay) }
            await self.fetch(key)
            let next = self.state.withLock { state -> CacheKey? in
                state.queued.remove(key)
                state.recent.insert((), forKey: key)
                guard !state.queue.isEmpty else {
                    state.running -= 1
                    return nil
                }
                return state.queue.removeFirst()
            }
            if let next { self.start(next) }
        }
    }

    private func fetch(_ key: CacheKey) async {
        do {
            switch delivery {
            case .local(let cache):
                let response = try await cache.fetch(key)
                if response.disposition == .hit { return }
                for try await _ in response.body {}
            case .fleet(let fleet):
                try await fleet.send(key)
            }
        } catch {
            logger.debug("read-ahead failed", metadata: ["url": "\(key)", "error": "\(error)"])
        }
    }
}
