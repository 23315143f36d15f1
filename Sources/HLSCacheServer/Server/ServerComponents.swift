import Foundation
import HLSPlaylist
import Logging
import OriginCache
import OriginClient
import SegmentCache
import Synchronization

/// The parts every request handler shares: configuration, cache, origin clients, metrics and bookkeeping.
final class ServerComponents: Sendable {
    let configuration: ServerConfiguration
    /// The configuration's address policy, built once (its host patterns are parsed at creation).
    let addressPolicy: AddressPolicy
    /// The cache and the origin clients that fill it.
    let origin: CachedOrigin
    let cache: SegmentCache
    let client: OriginClient
    let blockingClient: OriginClient
    let metrics: ServerMetrics
    let activity = StreamActivity()
    let segmentIndex = SegmentIndex()
    let readAhead: ReadAhead?
    let playlists: RenderedPlaylists
    /// The in-memory tier for small hot objects.
    let hotObjects: HotObjects
    let logger: Logger
    let startedAt = Date()
    let draining = Atomic<Bool>(false)
    /// The address policy's answers by `scheme://authority` (bounded).
    let addressVerdicts = AddressVerdicts()
    private let requestCounter = Atomic<Int>(0)
    private let requestPrefix = String(UInt32.random(in: 0...UInt32.max), radix: 16)

    init(configuration: ServerConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.addressPolicy = configuration.addressPolicy
        self.logger = logger
        let metrics = ServerMetrics()
        self.metrics = metrics
        var originCache = configuration.originCache
        originCache.addressPolicy = addressPolicy
        origin = try CachedOrigin(configuration: originCache, metrics: metrics, logger: logger)
        cache = origin.cache
        client = origin.client
        blockingClient = origin.blockingClient
        readAhead =
            configuration.prefetchCount > 0
            ? ReadAhead(cache: cache, concurrency: configuration.prefetchConcurrency, logger: logger) : nil
        // The memory budget: a quarter for rewritten playlists, the rest for small hot objects.
        // Renderings too large for memory: a sixteenth of the cache's bound on disk, from 64 MiB to 1 GiB.
        let fileBytes = Int(clamping: min(max(configuration.maxCacheBytes / 16, 64 << 20), 1 << 30))
        playlists = RenderedPlaylists(
            maxBytes: configuration.memoryCacheBytes / 4, maxFileBytes: fileBytes,
            cacheDirectory: configuration.cacheDirectory)
        hotObjects = HotObjects(maxBytes: configuration.memoryCacheBytes - configuration.memoryCacheBytes / 4)
    }

    /// A new request id: this process's random prefix and a counter.
    func nextRequestID() -> String {
        "\(requestPrefix)-\(requestCounter.add(1, ordering: .relaxed).newValue)"
    }
}
