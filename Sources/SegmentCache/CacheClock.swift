import Foundation

/// Where the cache gets wall-clock time and how its janitor waits; injected so tests control expiry.
///
/// Expiry, fetch time and last access are persisted across restarts, so they are wall-clock
/// `Date`s, not instants of a monotonic `Clock`.
public protocol CacheClock: Sendable {
    /// The current wall-clock time.
    /// - Returns: now.
    func now() -> Date
    /// Suspends the calling task for `duration`.
    /// - Parameter duration: how long to wait.
    /// - Throws: `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The system's wall clock, and `Task.sleep` on the continuous clock.
public struct SystemCacheClock: CacheClock {
    /// Creates the system clock.
    public init() {}

    /// The current wall-clock time.
    /// - Returns: `Date()`.
    public func now() -> Date { Date() }

    /// Sleeps on `ContinuousClock`.
    /// - Parameter duration: how long to wait.
    /// - Throws: `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

extension Date {
    /// Milliseconds since 1970, the unit of the entry header's times: rounded down, so a stored expiry is never
    /// later than the real one (an answer fresh for 0 s is stale at once, not for half a millisecond more). A
    /// microsecond's allowance lets a date made by ``init(millisecondsSince1970:)`` give back its own count.
    /// Saturates at `Int64`'s bounds (a date no clock reaches), so a far-future expiry cannot trap.
    var millisecondsSince1970: Int64 {
        let milliseconds = (timeIntervalSince1970 * 1000 + 0.001).rounded(.down)
        guard milliseconds.isFinite else { return milliseconds > 0 ? .max : .min }
        guard milliseconds < 9.2e18 else { return .max }
        guard milliseconds > -9.2e18 else { return .min }
        return Int64(milliseconds)
    }

    /// The date `milliseconds` after 1970.
    init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
