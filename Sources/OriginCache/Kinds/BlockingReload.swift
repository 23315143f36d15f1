/// LL-HLS blocking playlist reloads (RFC 8216bis §6.2.5.2): a request the origin holds until the playlist has the
/// asked-for segment or part.
package enum BlockingReload {
    /// Whether a URL is a blocking playlist reload (`_HLS_msn` in its query).
    package static func isBlockingReload(_ url: String) -> Bool {
        // By bytes: a `Character` search walks grapheme clusters, for every miss.
        guard let query = url.utf8.firstIndex(of: UInt8(ascii: "?")) else { return false }
        return url[query...].containsBytes(of: "_HLS_msn=")
    }
}
