import Synchronization

/// Counts the requests a ``TestOrigin`` received, by path.
final class OriginLog: Sendable {
    private let counts = Mutex<[String: Int]>([:])

    /// Counts a request; returns how many times `path` was asked for, this one included.
    @discardableResult
    func record(_ path: String) -> Int {
        counts.withLock { counts in
            counts[path, default: 0] += 1
            return counts[path]!
        }
    }

    /// How many times `path` was asked for.
    func count(_ path: String) -> Int {
        counts.withLock { $0[path, default: 0] }
    }
}
