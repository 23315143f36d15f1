import Foundation
import NIOCore
import NIOPosix
import OriginCache

extension HTTPDate {
    /// One thread's `Date` header: each event loop formats it at most once a second, with no lock shared with the
    /// others (a shared one was contended by every answer of a fan-out).
    private final class ThreadDate: @unchecked Sendable {
        var second = Int64.min
        var text = ""
        /// `Date: <text> CRLF Server: hlscache CRLF`.
        var lines = ByteBuffer()

        /// Brings the date to the current second.
        func update() {
            let second = Int64(Date().timeIntervalSince1970.rounded(.down))
            guard self.second != second else { return }
            self.second = second
            text = HTTPDate.format(Date(timeIntervalSince1970: TimeInterval(second)))
            lines = ServerFields.lines(date: text)
        }
    }

    private static let threadDates = ThreadSpecificVariable<ThreadDate>()

    /// Now, for the `Date` header.
    static var now: String {
        let cached = threadDates.current(orMake: ThreadDate.init)
        cached.update()
        return cached.text
    }

    /// The connection's own lines that every answer the hit path writes starts its end with: `Date` (now) and
    /// `Server`, as ``ServerFields`` lists them.
    static var dateAndServerLines: ByteBuffer {
        let cached = threadDates.current(orMake: ThreadDate.init)
        cached.update()
        return cached.lines
    }
}
