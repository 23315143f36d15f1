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

    private let failedUntil = Mutex(ClockMap<CacheKey, ContinuousClock.Instant>(capacity: RefreshBackoff.capacity))

    /// Creates an empty record.
    init() {}

    /// How long a refresh waits after a failure: a live manifest's refresh period (`liveFreshSeconds`, within
    /// ``livePeriodBounds``), or ``staticPeriod``.
    static func period(isLive: Bool, liveFreshSeconds: Double) -> Duration {
        guard isLive else { return staticPeriod }
        let seconds = min(max(liveFreshSeconds, livePeriodBounds.lowerBound), livePeriodBounds.upperBound)
        return .milliseconds(Int64(seconds * 1000))
    }

    /// Whether a refresh of `key` may start now: none failed within its period.
    func allowsRefresh(of key: CacheKey, now: ContinuousClock.Instant = .now) -> Bool {
        failedUntil.withLock { failed in
            guard let until = failed.peek(key) else { return true }
            if now < until { return false }
            failed.removeValue(forKey: key)
            return true
        }
    }

    /// A refresh of `key` failed: the next waits `period`.
    func refreshFailed(_ key: CacheKey, period: Duration, now: ContinuousClock.Instant = .now) {
        failedUntil.withLock { failed in
            if failed.count >= Self.capacity, !failed.contains(key) { failed.removeAll(whereValue: { $0 <= now }) }
            _ = failed.insert(now + period, forKey: key)
        }
    }

    /// A refresh of `key` succeeded: the next may start when it is due.
    func refreshSucceeded(_ key: CacheKey) {
        failedUntil.withLock { failed in
            guard failed.count > 0 else { return }
            failed.removeValue(forKey: key)
        }
    }

    /// How many keys are remembered (for tests).
    var count: Int { failedUntil.withLock { $0.count } }
}
