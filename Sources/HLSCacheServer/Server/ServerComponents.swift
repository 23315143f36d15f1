import Logging
import OriginCache
import SegmentCache
import Synchronization

/// The server's parts, each with one job, built once from the configuration and shared by both answer paths.
final class ServerComponents: Sendable {
    /// The configuration the parts were built from.
    let configuration: ServerConfiguration
    /// The fill policy: the disk cache and the origin clients that fill it.
    let origin: CachedOrigin
    /// What the address policy says of each origin (memoized).
    let addresses: AddressVerdicts
    /// Rewritten playlists and small hot objects in memory.
    let memory: MemoryTiers
    /// Which playlist each segment belongs to, and which segments follow it.
    let segmentIndex = SegmentIndex()
    /// The read-ahead queue (none with `--prefetch-count 0`).
    let readAhead: ReadAhead?
    /// Logs, metrics, stream activity and request ids.
    let observability: Observability
    /// Set on SIGTERM: `/healthz` answers 503 while answers in flight finish.
    let draining = Atomic<Bool>(false)

    /// The disk cache.
    var cache: SegmentCache { origin.cache }
    /// The server's logger.
    var logger: Logger { observability.logger }
    /// The Prometheus metrics.
    var metrics: ServerMetrics { observability.metrics }

    init(configuration: ServerConfiguration, logger: Logger) throws {
        self.configuration = configuration
        let policy = configuration.addressPolicy
        addresses = AddressVerdicts(policy: policy)
        let metrics = ServerMetrics()
        observability = Observability(logger: logger, metrics: metrics)
        var originCache = configuration.originCache
        originCache.addressPolicy = policy
        origin = try CachedOrigin(configuration: originCache, metrics: metrics, logger: logger)
        readAhead =
            configuration.prefetchCount > 0
            ? ReadAhead(cache: origin.cache, concurrency: configuration.prefetchConcurrency, logger: logger) : nil
        memory = MemoryTiers(configuration: configuration)
    }
}
