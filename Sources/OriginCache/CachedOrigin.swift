import Foundation
import HLSPlaylist
import Logging
import OriginClient
import SegmentCache
import Synchronization

/// A cache directory filled from origins exactly as `hlscache serve` fills it: the same keys, the same playlist
/// checks and expiries, the same metadata. The server builds its cache with it, and so does `hlscache prefetch`
/// so that what it stores is what the server looks for (safe while a server runs on the same directory).
///
/// ```swift
/// let origin = try CachedOrigin(configuration: configuration, logger: logger)
/// let response = try await origin.cache.fetch(CacheKey(url: "https://cdn.example/seg1.ts"))
/// await origin.close()
/// ```
public final class CachedOrigin: Sendable {
    /// The disk cache; misses are fetched from the origin.
    public let cache: SegmentCache
    /// The origin client for ordinary fetches.
    public let client: OriginClient
    /// The origin client for LL-HLS blocking playlist reloads: long first-byte timeout, no retry.
    package let blockingClient: OriginClient
    /// How origin URLs become cache keys: every key of this cache is made by it.
    public let keys: CacheKeyPolicy

    /// Opens the cache directory and starts the origin clients.
    /// - Parameters:
    ///   - configuration: the cache directory and size, the address policy, the origin timeout, the playlist
    ///     expiries and the object size limit.
    ///   - metrics: where origin requests and bytes are counted.
    ///   - logger: where the cache's warnings go.
    /// - Throws: when the cache directory cannot be created or the origin client cannot start.
    public init(
        configuration: OriginCacheConfiguration, metrics: any OriginCacheMetrics = NoOriginCacheMetrics(),
        logger: Logger
    ) throws {
        keys = configuration.cacheKeys
        let timeouts = OriginTimeouts(originTimeout: configuration.originTimeout)
        // Through a parent, the only host this node connects to is the parent's: listed exactly, so it may be private.
        let policy =
            configuration.parent.map { AddressPolicy(allowedHosts: [$0.host], allowPrivateNetworks: false) }
            ?? configuration.addressPolicy
        var clientConfiguration = OriginClientConfiguration(policy: policy, timeouts: timeouts)
        clientConfiguration.maxBodyBytes = configuration.maxObjectBytes
        clientConfiguration.apply(configuration.originAccess)
        // The origins' headers are for the origins: through a parent, the parent's own --origin-header apply.
        if let parent = configuration.parent {
            clientConfiguration.originHeaders = []
            // The parent's certificate is verified against its CA, when one is given (the only host fetched from).
            if let authority = parent.certificateAuthority { clientConfiguration.caBundle = authority }
        }
        client = try OriginClient(configuration: clientConfiguration)
        // LL-HLS blocking reloads: the origin holds them until the part exists, up to three target durations.
        clientConfiguration.timeouts.firstByte = max(configuration.originTimeout, .seconds(30))
        clientConfiguration.maxRetries = 0
        // Blocked reloads wait, they hardly copy: one thread carries them all.
        clientConfiguration.workerThreads = 1
        clientConfiguration.workerProcessors = []
        clientConfiguration.threadName = "hlscache-llhls"
        blockingClient = try OriginClient(configuration: clientConfiguration)
        let source = OriginObjectSource(
            client: client,
            blockingClient: blockingClient,
            freshness: PlaylistFreshness(
                vodTTL: configuration.vodPlaylistTTL, multivariantTTL: configuration.multivariantPlaylistTTL),
            parseLimits: .init(),
            // With query parameters left out of segment keys, a 404 for one viewer (no token, an expired one) must
            // not be served to the others: nothing is remembered.
            negativeTTL: configuration.cacheKeys.ignoredQuery.isEmpty ? configuration.negativeTTL : .zero,
            deadlines: ManifestDeadlines(manifestTimeout: configuration.manifestTimeout),
            metrics: metrics,
            parent: configuration.parent,
            nodeName: configuration.nodeName
        )
        do {
            var cacheConfiguration = SegmentCache.Configuration(
                directory: configuration.cacheDirectory,
                maxBytes: configuration.maxCacheBytes,
                log: { record in
                    let level: Logger.Level = record.level == .debug ? .debug : .warning
                    logger.log(
                        level: level, "cache: \(record.message)", metadata: record.key.map { ["url": "\($0)"] })
                }
            )
            cacheConfiguration.maxFills = configuration.maxFills
            cache = try SegmentCache(configuration: cacheConfiguration, source: source)
        } catch {
            client.shutdown()
            blockingClient.shutdown()
            throw error
        }
    }

    /// Writes the cache's index, closes it, and stops the origin clients.
    public func close() async {
        await cache.close()
        shutdownClients()
    }

    /// Stops the origin clients (transfers in progress fail).
    package func shutdownClients() {
        client.shutdown()
        blockingClient.shutdown()
    }

    /// Stops the origin clients on a thread of its own, waiting at most `limit` for their threads to end, so
    /// that a process on its way out is never held up by them.
    /// - Returns: whether they ended in time.
    package func shutdownClients(within limit: Duration) async -> Bool {
        let waiter = Mutex<CheckedContinuation<Bool, Never>?>(nil)
        return await withCheckedContinuation { continuation in
            waiter.withLock { $0 = continuation }
            Thread {
                self.shutdownClients()
                waiter.withLock { $0.take() }?.resume(returning: true)
            }.start()
            Thread {
                Thread.sleep(
                    forTimeInterval: Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18)
                waiter.withLock { $0.take() }?.resume(returning: false)
            }.start()
        }
    }
}
