/// Counts of a prefetch so far: what a progress line shows.
public struct PrefetchProgress: Sendable, Hashable {
    /// Objects found so far (segments, keys, initialization sections; each counted once).
    public var total = 0
    /// Objects fetched and stored by this run.
    public var fetched = 0
    /// Objects found already stored.
    public var present = 0
    /// Objects that could not be fetched.
    public var failed = 0
    /// Objects skipped because the run was interrupted.
    public var skipped = 0
    /// Bytes fetched by this run.
    public var bytes: Int64 = 0
    /// Playlists fetched (refreshes of live playlists included).
    public var playlistFetches = 0

    /// Objects finished one way or another.
    public var finished: Int { fetched + present + failed + skipped }
}

/// The outcome of a prefetch, printed by `--json`.
public struct PrefetchSummary: Sendable, Codable {
    /// Something that could not be fetched.
    public struct Failure: Sendable, Codable, Hashable {
        /// The URL (with `@offset+length` for a byte range).
        public var url: String
        /// Why, in one line.
        public var reason: String
    }

    /// The URL given.
    public var url: String
    /// Media playlists walked.
    public var playlists: Int
    /// Whether a live stream was followed.
    public var live: Bool
    /// Objects found (segments, keys, initialization sections).
    public var objects: Int
    /// Objects fetched by this run.
    public var fetched: Int
    /// Objects found already stored.
    public var alreadyPresent: Int
    /// Objects that could not be fetched.
    public var failed: Int
    /// Objects skipped because the run was interrupted.
    public var skipped: Int
    /// Bytes fetched by this run.
    public var bytes: Int64
    /// Wall-clock seconds.
    public var seconds: Double
    /// Playlists and objects that failed, with the reason.
    public var failures: [Failure]

    /// 0 when everything is stored, 1 when something failed or was skipped.
    public var exitCode: Int32 { failed == 0 && skipped == 0 && failures.isEmpty ? 0 : 1 }
}
