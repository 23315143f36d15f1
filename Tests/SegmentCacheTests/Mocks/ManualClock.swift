import Foundation
import SegmentCache
import Synchronization

/// A wall clock the tests move by hand; its sleep is a real, short sleep.
final class ManualClock: CacheClock {
    private let current: Mutex<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_750_000_000)) {
        current = Mutex(start)
    }

    func now() -> Date { current.withLock { $0 } }

    /// Moves the clock forward.
    func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: .milliseconds(1))
    }
}
