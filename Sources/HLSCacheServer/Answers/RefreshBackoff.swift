import SegmentCache
import Synchronization

/// When a manifest's refresh may be tried again after one failed: not before a refresh period has passed.
///
/// ``Grace`` serves the stale copy of an expired manifest while one refresh runs; the single flight makes it one
/// while it is in flight. An origin that fails at once (a 503, a refused connection) ends each refresh before the
/// next player asks, and every poll would start another: the origin, in trouble already, would get one request per
/// player. After a failure the stale copy is served with no refresh until the period is over: about one origin
/// request per refresh period, however many players poll.
final class RefreshBackoff: Sendable {
    /// How long after a failure a refresh of a manifest that is not live waits.
    static let staticPeriod: Duration = .seconds(1)
    /// The bounds of a live manifest's period (its refresh period, half a target duration).
    static let livePeriodBounds: ClosedRange<Double> = 0.5...10
    /// The most keys remembered; past it, those whose wait is over are forgotten, then the bounded map's choice.
    static let capacity = 4096

    /// The failures' waits, and the refreshes claimed and not yet ended.
    private struct State {
        var failedUntil = ClockMap<CacheKey, ContinuousClock.Instant>(capacity: RefreshBackoff.capacity)
        var running: Set<CacheKey> = []
    }

    private let state = Mutex(State())

    /// Creates an empty record.
    init() {}

    /// How long a refresh waits after a failure: a live manifest's refresh period (`liveFreshSeconds`, within
    /// ``livePeriodBounds``), or ``staticPeriod``.
    static func period(isLive: Bool, liveFreshSeconds: Double) -> Duration {
        guard isLive else { return staticPeriod }
        let seconds = min(max(liveFreshSeconds, livePeriodBounds.lowerBound), livePeriodBounds.upperBound)
        return .milliseconds(Int64(seconds * 1000))
    }

    /// Claims the refresh of `key`: `true` when none failed within its period and no claimed one is running; the
    /// claimer ends it with ``refreshSucceeded(_:)`` or ``refreshFailed(_:period:now:)``. Deciding and claiming are one
    /// step: two polls that both saw no refresh running started two (a CI run saw an origin failing at once asked
    /// twice in 0.4 s, the second refresh started between the first's end in the cache and its failure here).
    func claimRefresh(of key: CacheKey, now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            guard !state.running.contains(key) else { return false }
            if let until = state.failedUntil.peek(key) {
                if now < until { return false }
                state.failedUntil.removeValue(forKey: key)
            }
            state.running.insert(key)
            return true
        }
    }

    /// A refresh of `key` failed: the next waits `period`.
    func refreshFailed(_ key: CacheKey, period: Duration, now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            state.running.remove(key)
            if state.failedUntil.count >= Self.capacity, !state.failedUntil.contains(key) {
                state.failedUntil.removeAll(whereValue: { $0 <= now })
            }
            _ = state.failedUntil.insert(now + period, forKey: key)
        }
    }

    /// A refresh of `key` succeeded: the next may start when it is due.
    func refreshSucceeded(_ key: CacheKey) {
        state.withLock { state in
            state.running.remove(key)
            guard state.failedUntil.count > 0 else { return }
            state.failedUntil.removeValue(forKey: key)
        }
    }

    /// How many keys are remembered (for tests).
    var count: Int { state.withLock { $0.failedUntil.count } }
}
