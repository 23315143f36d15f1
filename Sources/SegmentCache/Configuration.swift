extension SegmentCache {
    /// When the cache calls `fdatasync` on what it writes.
    public enum SyncPolicy: Sendable, Hashable {
        /// `fdatasync` each entry before the rename that publishes it. After a power loss an entry is
        /// either absent or complete; entries published just before the loss may be absent. The default.
        case beforePublish
        /// Never sync. A process crash still leaves only complete entries (the page cache survives it),
        /// but after a power loss a published entry may hold zeros or garbage of the right length.
        /// For throwaway caches and benchmarks.
        case never
    }

    /// How a cache is set up.
    public struct Configuration: Sendable {
        /// The cache directory; created if missing. Two processes may share it.
        public var directory: String
        /// The most bytes (entry files, headers included) the cache keeps; least recently used entries go first.
        public var maxBytes: Int64
        /// When data is made durable; see ``SyncPolicy``.
        public var sync: SyncPolicy
        /// The largest chunk a body stream yields, in bytes (default 256 KiB).
        public var readChunkSize: Int
        /// How often the janitor evicts entries other processes added and persists last-access times (default 10 s).
        public var janitorInterval: Duration
        /// How often the janitor rescans the directory to learn about other processes' entries (default 5 min).
        public var rescanInterval: Duration
        /// Receives what the cache has to report: disk errors, removed corrupt entries, evictions.
        public var log: @Sendable (CacheLogRecord) -> Void
        /// How long a hit's check that the entry it holds open is current (still linked, its expiry read back)
        /// stands for the next hits (default 10 ms): under load one `fstat` and `pread` per entry per window
        /// instead of per hit. This process's own replacements and removals are seen at once; another process's,
        /// at most this much later. Zero checks on every hit.
        public var heldEntryRecheck: Duration = .milliseconds(10)
        /// The most fills (origin fetches) in flight at once: each holds a temporary file and an origin connection.
        /// A miss past it is refused (``CacheError/tooManyFillsKind``), so that abandoned requests cannot take the
        /// process to its descriptor limit.
        public var maxFills: Int = 1024
        /// How long a fill goes on with no reader reading or waiting (every requester gone, or stalled) before it is
        /// stopped and not stored; checked as its body arrives.
        public var abandonAfter: Duration = .seconds(30)
        /// The most body bytes one fill holds in memory (default 64 MiB): its body goes there only once its temporary
        /// file cannot be written (a disk error), and stays until its slowest reader is done. Past this much the fill
        /// fails, cutting its readers short (never a clean end), rather than grow the process without bound.
        public var maxMemoryPerFill: Int64 = 64 << 20

        /// Creates a configuration.
        /// - Parameters:
        ///   - directory: the cache directory.
        ///   - maxBytes: the size bound, in bytes.
        ///   - sync: when data is made durable.
        ///   - readChunkSize: the largest chunk a body stream yields.
        ///   - janitorInterval: how often the janitor runs.
        ///   - rescanInterval: how often the janitor rescans the directory.
        ///   - log: receives log records; by default they are dropped.
        public init(
            directory: String,
            maxBytes: Int64,
            sync: SyncPolicy = .beforePublish,
            readChunkSize: Int = 256 * 1024,
            janitorInterval: Duration = .seconds(10),
            rescanInterval: Duration = .seconds(300),
            log: @escaping @Sendable (CacheLogRecord) -> Void = { _ in }
        ) {
            self.directory = directory
            self.maxBytes = maxBytes
            self.sync = sync
            self.readChunkSize = max(4096, readChunkSize)
            self.janitorInterval = janitorInterval
            self.rescanInterval = rescanInterval
            self.log = log
        }
    }
}
