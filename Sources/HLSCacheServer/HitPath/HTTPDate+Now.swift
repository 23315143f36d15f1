import Foundation
import OriginCache
import Synchronization

extension HTTPDate {
    private static let cached = Mutex<(second: Int, text: String)>((-1, ""))

    /// Now, for the `Date` header: formatted at most once a second.
    static var now: String {
        let second = Int(Date().timeIntervalSince1970)
        return cached.withLock { cached in
            if cached.second != second {
                cached = (second, format(Date(timeIntervalSince1970: TimeInterval(second))))
            }
            return cached.text
        }
    }
}
