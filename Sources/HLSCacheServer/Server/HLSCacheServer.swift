import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import OriginCache
import OriginClient
import SegmentCache
import ServiceLifecycle
import Synchronization
import UnixSignals

/// The hlscache HTTP server: rewritten playlists and cached objects over SwiftNIO (each connection's
/// ``ConnectionFront``), with its cache janitor, under swift-service-lifecycle.
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

    /// The HTTPS port once it accepts; `nil` without HTTPS or before.
    public var tlsPort: Int? {
        let port = components.tlsListeningPort.load(ordering: .relaxed)
        return port == 0 ? nil : port
    }

    /// Opens the cache and starts the origin clients.
    /// - Parameters:
    ///   - configuration: what to serve and how.
    ///   - logger: where access-log lines and events go.
    /// - Throws: when the cache directory cannot be created or the origin client cannot start.
    public init(configuration: ServerConfiguration, logger: Logger) throws {
        components = try ServerComponents(configuration: configuration, logger: logger)
    }

    /// Serves until SIGTERM or SIGINT (or `stop`), then drains and closes.
    /// - Parameters:
    ///   - signals: the signals that begin the graceful shutdown: SIGTERM and SIGINT for the process's server, none
    ///     for a server a test runs in its own process.
    ///   - stop: begins the graceful shutdown when asked, as a signal would.
    ///   - onListening: called with the bound port once the server accepts connections.
    /// - Throws: when the address cannot be bound.
    public func run(
        signals: [UnixSignal] = [.sigterm, .sigint], stop: ServerStop = ServerStop(),
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let configuration = components.configuration
        let logger = components.logger
        let components = components
        let connections = Self.connectionCounter(configuration: configuration, logger: logger)
        let timeouts = ConnectionTimeouts(
            requestHead: TimeAmount(configuration.requestHeadTimeout), idle: TimeAmount(configuration.idleTimeout),
            send: TimeAmount(configuration.sendTimeout))
        let placement = await Self.bindThreads(components)
        // The caller hears of the port once every listener accepts: the cleartext one's (the TLS one's without it).
        let ready = ListenersReady(count: (configuration.servesCleartext ? 1 : 0) + (components.tls == nil ? 0 : 1))
        let announce: @Sendable (Int?) async -> Void = { port in
            if let port = await ready.listening(port) { await onListening(port) }
        }
        var listeners: [PortListeners] = []
        if configuration.servesCleartext {
            listeners.append(
                PortListeners(
                    // Each listener's own: the service group stops one listener after the other, and each waits
                    // for its own connections only.
                    connections: ConnectionTasks(),
                    initializeConnection: { channel in
                        try channel.pipeline.syncOperations.addHandler(
                            ConnectionGuard(
                                counter: connections, timeouts: timeouts, components: components,
                                acceptsHTTP2Preface: true))
                    },
                    host: configuration.host, port: configuration.port, backlog: 1024,
                    // Past the cap, stop accepting (the kernel's backlog holds the rest); the guard's own, slightly
                    // lower cap answers 503 first.
                    maxConnections: connections.limit + 16, group: .singleton,
                    onListening: { port in
                        components.listeningPort.store(port, ordering: .relaxed)
                        logger.info(
                            "hlscache listening",
                            metadata: [
                                "address": "http://\(configuration.host):\(port)",
                                "cache_dir": "\(configuration.cacheDirectory)",
                                "cpu_affinity": "\(placement)",
                                "version": "\(hlscacheVersion)",
                            ])
                        await announce(port)
                    }))
        }
        if let tls = components.tls, let settings = configuration.tls {
            listeners.append(
                PortListeners(
                    connections: ConnectionTasks(),
                    initializeConnection: { channel in
                        try TLSPipeline.install(
                            on: channel, certificates: tls, components: components, counter: connections,
                            timeouts: timeouts)
                    },
                    host: configuration.host, port: settings.port, backlog: 1024,
                    maxConnections: connections.limit + 16, group: .singleton,
                    onListening: { port in
                        components.tlsListeningPort.store(port, ordering: .relaxed)
                        if !configuration.servesCleartext { components.listeningPort.store(port, ordering: .relaxed) }
                        logger.info(
                            "hlscache listening",
                            metadata: [
                                "address": "https://\(configuration.host):\(port)",
                                "cache_dir": "\(configuration.cacheDirectory)",
                                "certificate": "\(settings.certificatePath)",
                                "version": "\(hlscacheVersion)",
                            ])
                        await announce(configuration.servesCleartext ? nil : port)
                    }))
        }
        // The listeners right after the janitor, as before there were two: the group stops its services in reverse.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: CacheJanitorService(cache: components.cache))
        ]
        services += listeners.map { .init(service: $0) }
        services.append(
            .init(service: TrafficHistoryService(components: components), successTerminationBehavior: .ignore))
        if let tls = components.tls {
            services.append(
                .init(service: TLSReloadService(certificates: tls, logger: logger), successTerminationBehavior: .ignore)
            )
        }
        if let history = components.liveHistory {
            services.append(.init(service: LiveHistoryService(history: history), successTerminationBehavior: .ignore))
        }
        if !components.placement.processors.isEmpty {
            services.append(
                .init(service: StrayThreadService(placement: components.placement), successTerminationBehavior: .ignore)
            )
        }
        if let parent = configuration.fill.parent {
            services.append(
                .init(
                    service: ParentProbeService(components: components, parent: parent),
                    successTerminationBehavior: .ignore))
        }
        // Last, so that it is signalled first.
        services.append(
            .init(service: DrainFlagService(components: components), successTerminationBehavior: .ignore))
        let group = ServiceGroup(
            configuration: .init(
                services: services,
                gracefulShutdownSignals: signals,
                cancellationSignals: [],
                logger: logger
            ).withGrace(configuration.shutdownGrace)
        )
        do {
            try await stop.running(group) { try await group.run() }
        } catch {
            _ = await components.origin.shutdownClients(within: .seconds(2))
            throw error
        }
        if await !components.origin.shutdownClients(within: .seconds(2)) {
            logger.warning("the origin client threads did not stop within 2 s")
        }
        // What the last seconds added, kept for the next start.
        components.liveHistory?.persistAll()
        logger.info("hlscache stopped", metadata: ["cache_entries": "\(components.cache.statistics.entries)"])
        // Its log is written when this returns (standard output, or a test's lines).
        components.observability.directOutput.flush()
    }
}

/// Tells when every listener of a server accepts, and which port to announce then.
private actor ListenersReady {
    private var remaining: Int
    private var announced: Int?

    init(count: Int) {
        remaining = count
    }

    /// A listener accepts; `port` is the one to announce, if it is this listener's.
    /// - Returns: the port to announce, once the last listener accepts.
    func listening(_ port: Int?) -> Int? {
        if let port { announced = port }
        remaining -= 1
        return remaining == 0 ? announced : nil
    }
}

/// Begins a server's graceful shutdown from code, as SIGTERM does: what a test that runs the server in its own process
/// stops it with.
public final class ServerStop: Sendable {
    private struct State {
        var group: ServiceGroup?
        var requested = false
    }

    private let state = Mutex(State())

    /// A stop not yet asked for.
    public init() {}

    /// Begins the graceful shutdown (at once if the server runs, as soon as it starts otherwise).
    public func request() async {
        let group = state.withLock { state -> ServiceGroup? in
            state.requested = true
            return state.group
        }
        await group?.triggerGracefulShutdown()
    }

    /// Runs `body` (the group's run) with the group known to ``request()``.
    fileprivate func running(_ group: ServiceGroup, _ body: () async throws -> Void) async throws {
        let requested = state.withLock { state in
            state.group = group
            return state.requested
        }
        // A request before the group runs is remembered by the group.
        if requested { await group.triggerGracefulShutdown() }
        try await body()
    }
}

extension HLSCacheServer {
    /// Binds the event loops as ``ThreadPlacement`` decided (the origin threads were bound when their client
    /// started); logs what the kernel refused.
    /// - Returns: the placement as logged.
    fileprivate static func bindThreads(_ components: ServerComponents) async -> String {
        let placement = components.placement
        // Started before the loops are bound, so that they do not inherit a loop's processor.
        _ = DiskThreads.shared
        var refused = await placement.bindEventLoops()
        for (index, bound) in components.origin.client.boundWorkerProcessors.enumerated()
        where index < placement.processors.count && bound != placement.processors[index] {
            refused.append("origin thread \(index): could not bind it to processor \(placement.processors[index])")
        }
        for line in refused {
            components.logger.warning("thread not bound to its processor", metadata: ["reason": "\(line)"])
        }
        return placement.summary
    }

    /// Raises the open-file limit to its hard limit and sizes the connection cap to fit in it.
    fileprivate static func connectionCounter(configuration: ServerConfiguration, logger: Logger) -> ConnectionCounter {
        let files = OpenFileLimit.raise()
        let openFiles = files?.after ?? 1024
        let limit = OpenFileLimit.connectionLimit(openFiles: openFiles, requested: configuration.maxConnections)
        logger.info(
            "connection limits",
            metadata: [
                "open_files_before": "\(files?.before ?? -1)", "open_files": "\(openFiles)",
                "max_connections": "\(limit)",
                "request_head_timeout_s": "\(configuration.requestHeadTimeout.seconds)",
                "idle_timeout_s": "\(configuration.idleTimeout.seconds)",
                "send_timeout_s": "\(configuration.sendTimeout.seconds)",
            ])
        if limit < configuration.maxConnections {
            logger.warning(
                "fewer connections than --max-connections fit in the open-file limit",
                metadata: ["max_connections": "\(configuration.maxConnections)", "open_files": "\(openFiles)"])
        }
        return ConnectionCounter(limit: limit)
    }
}

extension TimeAmount {
    /// The same span as `duration`, in nanoseconds (saturating).
    fileprivate init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let (nanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        self = .nanoseconds(overflow ? .max : nanoseconds &+ attoseconds / 1_000_000_000)
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
