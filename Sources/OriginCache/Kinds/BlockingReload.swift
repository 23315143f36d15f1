/// LL-HLS blocking playlist reloads (RFC 8216bis §6.2.5.2): a request the origin holds until the playlist has the
/// asked-for segment or part.
package enum BlockingReload {
    /// Whether a URL is a blocking playlist reload (`_HLS_msn` in its query).
    package static func isBlockingReload(_ url: String) -> Bool {
        guard let query = url.firstIndex(of: "?") else { return false }
        return url[query...].containsBytes(of: "_HLS_msn=")
    }
}
