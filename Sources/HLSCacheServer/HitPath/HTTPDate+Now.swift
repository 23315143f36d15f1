import Foundation
import NIOPosix
import OriginCache

extension HTTPDate {
    /// One thread's `Date` header: each event loop formats it at most once a second, with no lock shared with the
    /// others (a shared one was contended by every answer of a fan-out).
    private final class ThreadDate: @unchecked Sendable {
        var second = Int64.min
        var text = ""
    }

    private static let threadDates = ThreadSpecificVariable<ThreadDate>()

    /// Now, for the `Date` header.
    static var now: String {
        let second = Int64(Date().timeIntervalSince1970.rounded(.down))
        let cached = threadDates.current(orMake: ThreadDate.init)
        if cached.second != second {
            cached.second = second
            cached.text = format(Date(timeIntervalSince1970: TimeInterval(second)))
        }
        return cached.text
    }
}
