import Foundation
import Hummingbird
import Logging
import NIOCore
import OriginClient
import SegmentCache
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The hlscache HTTP server: rewritten playlists and cached objects over Hummingbird 2, with its cache
/// janitor, under swift-service-lifecycle.
///
/// ```swift
/// var configuration = ServerConfiguration()
/// configuration.cacheDirectory = "/var/cache/hlscache"
/// try await HLSCacheServer(configuration: configuration, logger: logger).run()
/// ```
///
/// `run()` returns after SIGTERM or SIGINT: the server stops accepting, `/healthz` answers 503, in-flight
/// responses get ``ServerConfiguration/shutdownGrace`` to finish, then the cache writes its index and closes.
public struct HLSCacheServer: Sendable {
    private let components: ServerComponents

    /// Opens the cache and starts the origin clients.
    /// - Parameters:
    ///   - configuration: what to serve and how.
    ///   - logger: where access-log lines and events go.
    /// - Throws: when the cache directory cannot be created or the origin client cannot start.
    public init(configuration: ServerConfiguration, logger: Logger) throws {
        components = try ServerComponents(configuration: configuration, logger: logger)
    }

    /// Serves until SIGTERM or SIGINT, then drains and closes.
    /// - Parameter onListening: called with the bound port once the server accepts connections.
    /// - Throws: when the address cannot be bound.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let configuration = components.configuration
        let logger = components.logger
        let components = components
        let hitPath = configuration.eventLoopHits
        let application = Application(
            responder: ProxyResponder(components: components),
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: hitPath ? [HitPathHandler(components: components)] : [])),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "hlscache"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                logger.info(
                    "hlscache listening",
                    metadata: [
                        "address": "http://\(configuration.host):\(port)",
                        "cache_dir": "\(configuration.cacheDirectory)",
                        "version": "\(hlscacheVersion)",
                    ])
                await onListening(port)
            },
            logger: Logger(label: "hlscache.hummingbird", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: CacheJanitorService(cache: components.cache)),
                    .init(service: application),
                    .init(service: DrainFlagService(components: components), successTerminationBehavior: .ignore),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                cancellationSignals: [],
                logger: logger
            ).withGrace(configuration.shutdownGrace)
        )
        do {
            try await group.run()
        } catch {
            _ = await components.origin.shutdownClients(within: .seconds(2))
            throw error
        }
        if await !components.origin.shutdownClients(within: .seconds(2)) {
            logger.warning("the origin client threads did not stop within 2 s")
        }
        logger.info("hlscache stopped", metadata: ["cache_entries": "\(components.cache.statistics.entries)"])
    }
}

extension ServiceGroupConfiguration {
    fileprivate func withGrace(_ grace: Duration) -> ServiceGroupConfiguration {
        var configuration = self
        configuration.maximumGracefulShutdownDuration = grace
        configuration.maximumCancellationDuration = .seconds(5)
        return configuration
    }
}

/// Runs the cache's janitor; on shutdown, the cache persists its index and closes.
struct CacheJanitorService: Service {
    let cache: SegmentCache

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await cache.run()
        }
    }
}

/// Flips `/healthz` to 503 as soon as graceful shutdown begins (it is signalled first, being last in the group).
struct DrainFlagService: Service {
    let components: ServerComponents

    func run() async throws {
        try? await gracefulShutdown()
        components.draining.store(true, ordering: .relaxed)
        components.logger.info("draining", metadata: ["grace_s": "\(components.configuration.shutdownGrace.seconds)"])
    }
}
