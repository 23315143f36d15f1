import Logging
import NIOCore
import OriginCache
import OriginClient
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
    /// The read-ahead of the segments players are about to ask for (none with `--prefetch 0`): into this node's
    /// cache, or through the fleet's balancer to the nodes that own them (`--fleet-url`).
    let readAhead: ReadAhead?
    /// What answers tell players (CTA-5006), unless `--cmsd off`.
    let cmsd: CMSD?
    /// How this node asks the fleet's owner of an object to read it ahead (`--fleet-url`). Kept here as a plain
    /// reference too: inside ``ReadAhead/Delivery`` it may sit in an enum's spare bits, where LeakSanitizer does not
    /// see it.
    let fleet: FleetReadAhead?
    /// The players' `nor`s, fetched ahead (``CMCDPrefetch``): a queue of its own, local or through the fleet.
    let cmcdReadAhead: ReadAhead
    /// The players' `nor` decided a moment ago (``CMCDPrefetch``).
    let cmcdRecent = CMCDPrefetch.Recent()
    /// Fills this node's cache: the fleet's read-ahead requests are queued here (``readAhead`` when that is local).
    let ownReadAhead: ReadAhead
    /// The live history (`--live-history`), unless it is off.
    let liveHistory: LiveHistory?
    /// The segments the live history lists, fetched when first listed: a queue of their own, local or through the
    /// fleet.
    let historyReadAhead: ReadAhead
    /// Logs, metrics, stream activity and request ids.
    let observability: Observability
    /// Which processor each event loop and its origin thread are bound to (`--cpu-affinity`).
    let placement: ThreadPlacement
    /// The port the server listens on (the configured one until bound: a port of 0 is known then): a target naming
    /// it on this host is a loop (``OriginTarget/isLoop(_:listeningPort:listeningHost:)``).
    let listeningPort: Atomic<Int>
    /// The certificate and key HTTPS handshakes use (`--tls-certificate`, `--tls-key`), reloaded on `SIGHUP`.
    let tls: TLSCertificates?
    /// The HTTPS port once bound (0 until then, or without HTTPS).
    let tlsListeningPort = Atomic<Int>(0)
    /// The clients logged for sending plain HTTP to the TLS port (``PlaintextRefusal``).
    let plaintextClients = LoggedClients()
    /// Set on SIGTERM: `/healthz` answers 503 while answers in flight finish.
    let draining = Atomic<Bool>(false)
    /// Wakes parked requests on their event loops, in batches.
    let wakeUps = EventLoopWakeUps()
    /// The renderings of requests' own views of large manifests, a few at once (``ViewRenderGate``).
    let viewRenders = ViewRenderGate(limit: System.coreCount / 2)
    /// The manifests whose last refresh failed, held back for a refresh period (``Grace``).
    let refreshBackoff = RefreshBackoff()
    /// Unique among the components this process makes: what a thread's memo of them (``ResolutionMemo``) is tied
    /// to. A number, not a weak reference: an object weakly referenced counts its references the slow way, and
    /// these are retained and released on every request.
    let identity = ServerComponents.identities.add(1, ordering: .relaxed).newValue

    private static let identities = Atomic<UInt64>(0)

    /// The disk cache.
    var cache: SegmentCache { origin.cache }
    /// The server's logger.
    var logger: Logger { observability.logger }
    /// The Prometheus metrics.
    var metrics: ServerMetrics { observability.metrics }

    init(configuration: ServerConfiguration, logger: Logger) throws {
        self.configuration = configuration
        listeningPort = Atomic(configuration.port)
        tls = try configuration.tls.map { settings throws(TLSSetupError) in
            try TLSCertificates(certificatePath: settings.certificatePath, keyPath: settings.keyPath)
        }
        var originCache = configuration.originCache
        addresses = AddressVerdicts(policy: originCache.addressPolicy)
        let metrics = ServerMetrics()
        observability = Observability(logger: logger, metrics: metrics)
        originCache.maxFills = OpenFileLimit.fillLimit(requested: originCache.maxFills)
        placement = ThreadPlacement.current(for: configuration)
        originCache.originAccess.workerProcessors = placement.processors
        origin = try CachedOrigin(configuration: originCache, metrics: metrics, logger: logger)
        let own = ReadAhead(.local(origin.cache), concurrency: configuration.readAheadConcurrency, logger: logger)
        ownReadAhead = own
        // Players' `nor`s have a queue of their own, through the fleet's owners when there is a fleet.
        var delivery = ReadAhead.Delivery.local(origin.cache)
        fleet = try configuration.fleetURL.map { fleetURL in
            let (base, host) = try ParentTier.base(of: fleetURL, option: "--fleet-url")
            return try FleetReadAhead(base: base, host: host, configuration: configuration)
        }
        if let fleet { delivery = .fleet(fleet) }
        cmcdReadAhead = ReadAhead(delivery, concurrency: configuration.readAheadConcurrency, logger: logger)
        historyReadAhead = ReadAhead(delivery, concurrency: configuration.readAheadConcurrency, logger: logger)
        liveHistory =
            configuration.liveHistorySeconds > 0
            ? LiveHistory(
                keepSeconds: configuration.liveHistorySeconds, cacheDirectory: originCache.cacheDirectory,
                logger: logger) : nil
        if configuration.readAheadCount == 0 {
            readAhead = nil
        } else if case .fleet = delivery {
            readAhead = ReadAhead(delivery, concurrency: configuration.readAheadConcurrency, logger: logger)
        } else {
            readAhead = own
        }
        memory = MemoryTiers(configuration: configuration)
        cmsd = configuration.cmsd ? CMSD(nodeName: configuration.nodeName) : nil
    }
}
