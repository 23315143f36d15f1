import Foundation
import HLSPlaylist
import Logging
import OriginClient
import SegmentCache
import Synchronization

/// The parts every request handler shares: configuration, cache, origin clients, metrics and bookkeeping.
final class ServerComponents: Sendable {
    let configuration: ServerConfiguration
    /// The configuration's address policy, built once (its host patterns are parsed at creation).
    let addressPolicy: AddressPolicy
    let cache: SegmentCache
    let client: OriginClient
    let blockingClient: OriginClient
    let metrics: ServerMetrics
    let activity = StreamActivity()
    let segmentIndex = SegmentIndex()
    let readAhead: ReadAhead?
    let playlists: RenderedPlaylists
    let logger: Logger
    let startedAt = Date()
    let draining = Atomic<Bool>(false)
    private let requestCounter = Atomic<Int>(0)
    private let requestPrefix = String(UInt32.random(in: 0...UInt32.max), radix: 16)

    init(configuration: ServerConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.addressPolicy = configuration.addressPolicy
        self.logger = logger
        let metrics = ServerMetrics()
        self.metrics = metrics
        var timeouts = OriginTimeouts()
        timeouts.connect = min(timeouts.connect, configuration.originTimeout)
        timeouts.firstByte = configuration.originTimeout
        timeouts.stall = max(timeouts.stall, configuration.originTimeout)
        var clientConfiguration = OriginClientConfiguration(policy: addressPolicy, timeouts: timeouts)
        clientConfiguration.maxBodyBytes = configuration.maxObjectBytes
        client = try OriginClient(configuration: clientConfiguration)
        // LL-HLS blocking reloads: the origin holds them until the part exists, up to three target durations.
        clientConfiguration.timeouts.firstByte = max(configuration.originTimeout, .seconds(30))
        clientConfiguration.maxRetries = 0
        blockingClient = try OriginClient(configuration: clientConfiguration)
        let source = OriginObjectSource(
            client: client,
            blockingClient: blockingClient,
            freshness: PlaylistFreshness(
                vodTTL: configuration.vodPlaylistTTL, multivariantTTL: configuration.multivariantPlaylistTTL),
            parseLimits: .init(),
            metrics: metrics
        )
        let cacheLogger = logger
        cache = try SegmentCache(
            configuration: .init(
                directory: configuration.cacheDirectory,
                maxBytes: configuration.maxCacheBytes,
                log: { record in
                    let level: Logger.Level = record.level == .debug ? .debug : .warning
                    cacheLogger.log(
                        level: level, "cache: \(record.message)", metadata: record.key.map { ["url": "\($0)"] })
                }
            ),
            source: source
        )
        readAhead =
            configuration.prefetchCount > 0
            ? ReadAhead(cache: cache, concurrency: configuration.prefetchConcurrency, logger: logger) : nil
        playlists = RenderedPlaylists(maxBytes: configuration.memoryCacheBytes)
    }

    /// A new request id: this process's random prefix and a counter.
    func nextRequestID() -> String {
        "\(requestPrefix)-\(requestCounter.add(1, ordering: .relaxed).newValue)"
    }
}
