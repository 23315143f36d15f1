import SegmentCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's limit on open files (`RLIMIT_NOFILE`), which bounds how many connections can be served.
enum OpenFileLimit {
    /// Raises the soft limit to the hard limit (systemd's default soft limit is 1024).
    /// - Returns: the soft limit before and after, or `nil` when it cannot be read.
    static func raise() -> (before: Int, after: Int)? {
        guard let limit = current() else { return nil }
        let before = Int(clamping: limit.rlim_cur)
        guard limit.rlim_cur < limit.rlim_max else { return (before, before) }
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        #if canImport(Darwin)
        raised.rlim_cur = min(limit.rlim_max, rlim_t(OPEN_MAX))
        #endif
        guard setrlimit(resource, &raised) == 0 else { return (before, before) }
        return (before, Int(clamping: raised.rlim_cur))
    }

    /// How many fills (each a temporary file and an origin socket) may be in flight within the limit the process can
    /// raise its open files to: an eighth of it (at least 8), so that fills keep well inside the quarter
    /// ``connectionLimit(openFiles:requested:)`` leaves for the cache and the origin client.
    /// - Parameter requested: `--max-fills`.
    /// - Returns: the smaller of the two.
    static func fillLimit(requested: Int) -> Int {
        guard let limit = current() else { return requested }
        return max(1, min(requested, max(8, Int(clamping: limit.rlim_max) / 8)))
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif

    /// The soft and hard limits now.
    private static func current() -> rlimit? {
        var limit = rlimit()
        return getrlimit(resource, &limit) == 0 ? limit : nil
    }

    /// How many connections fit in `openFiles` descriptors: a quarter (at least 32) stays for the cache's files,
    /// the origin client's sockets and the listening socket, and up to another quarter for the entries the cache
    /// keeps open for hits.
    /// - Parameters:
    ///   - openFiles: the soft limit.
    ///   - requested: the configured maximum.
    /// - Returns: the smaller of `requested` and what the descriptors allow, at least 1.
    static func connectionLimit(openFiles: Int, requested: Int) -> Int {
        let reserve = max(32, openFiles / 4) + min(SegmentCache.openEntryCapacity, openFiles / 4)
        return max(1, min(requested, openFiles - reserve))
    }
}
