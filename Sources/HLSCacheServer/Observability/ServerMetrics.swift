import CoreMetrics
import Foundation
import OriginCache
import Prometheus
import RequestHeads
import SegmentCache
import Synchronization

/// The server's metrics, kept in its own Prometheus registry (not the process-wide `MetricsSystem`, so that
/// several servers in one process, as in tests, count separately) and rendered by `GET /metrics`.
final class ServerMetrics: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    /// `hlscache_requests_total{kind,cache,protocol}`, at
    /// `(kind.index * CacheResult.allCases.count + result.index) * WireProtocol.allCases.count + protocol.index`.
    private let requests: [CoreMetrics.Counter]
    private let originRequests = Mutex<[String: CoreMetrics.Counter]>([:])
    /// `hlscache_origin_bytes_total`: body bytes received from origins.
    let originBytes: CoreMetrics.Counter
    /// `hlscache_served_bytes_total`: body bytes sent to clients.
    private let servedBytes: CoreMetrics.Counter
    private let cacheBytes: CoreMetrics.Gauge
    private let cacheEntries: CoreMetrics.Gauge
    private let fillsDeduplicated: CoreMetrics.Counter
    private let diskErrors: CoreMetrics.Counter
    /// `hlscache_cache_disk_full_evictions_total`: entries evicted because the cache's file system was full.
    private let diskFullEvictions: CoreMetrics.Counter
    /// `hlscache_playlist_renders_total`: playlists parsed and rewritten for serving (once per origin version).
    let playlistRenders: CoreMetrics.Counter
    /// `hlscache_purged_entries_total`: cache entries removed by the admin purge routes.
    private let purgedEntries: CoreMetrics.Counter
    private let purgeRequests: [String: CoreMetrics.Counter]
    /// `hlscache_fleet_read_ahead_received_total`: read-ahead requests of fleet nodes queued here (`--fleet-url`).
    private let fleetReadAheadReceived: CoreMetrics.Counter
    /// `hlscache_parked_requests_total`: LL-HLS blocking reloads that waited on the event loop for a fill in flight.
    private let parkedRequests: CoreMetrics.Counter
    /// `hlscache_event_loop_fill_starts_total`: misses whose fill the event loop started before handing the request
    /// to the responder.
    private let eventLoopFillStarts: CoreMetrics.Counter
    /// `hlscache_front_hits_total`: hits answered from the connection's bytes, in front of the HTTP/1 decoder
    /// (also counted in `hlscache_event_loop_hits_total`).
    private let frontHits: CoreMetrics.Counter
    /// `hlscache_kept_hits_total`: event-loop hits answered again from the hit their thread kept for the target
    /// (``KeptHit``), with no lookup (also counted in `hlscache_event_loop_hits_total`).
    private let keptHits: CoreMetrics.Counter
    /// `hlscache_front_misses_total`: requests for objects the cache holds no entry of that the front answered from
    /// the cache's verdict (a fill it started or joined, an entry published meanwhile, a refusal past `--max-fills`),
    /// without the HTTP/1 decoder and the responder (whatever the answer: the object, or the origin's failure).
    private let frontMisses: CoreMetrics.Counter
    /// `hlscache_responder_connections_total`: connections that needed Hummingbird's HTTP/1 handling (a request the
    /// front did not answer itself); the front's connections never set it up.
    private let responderConnections: CoreMetrics.Counter
    private let requestDuration: CoreMetrics.Timer
    /// `hlscache_event_loop_hits_total{body}`, at ``HitBodyKind/index`` (an array: a dictionary would hash the
    /// kind on every hit).
    private let eventLoopHits: [CoreMetrics.Counter]
    private let servedTotal = Atomic<Int64>(0)
    private let lastSeen = Mutex<(deduplicated: Int, diskErrors: Int, diskFull: Int)>((0, 0, 0))
    /// `hlscache_fills_in_flight`: origin fetches in flight now (at most `--max-fills`).
    private let fillsInFlight: CoreMetrics.Gauge
    /// `hlscache_fills_refused_total`, `hlscache_fills_abandoned_total`, `hlscache_fills_refetched_total`: misses
    /// refused past `--max-fills`, fills stopped because nobody read them, and requests that asked again with their
    /// own URL after another viewer's fill answered a failure (brought up to date from the cache's counters).
    private let fillCounters: [CoreMetrics.Counter]
    private let lastFillCounts = Mutex<[Int]>([0, 0, 0])
    /// What players report with CMCD.
    let cmcd: CMCDMetrics

    init() {
        factory = PrometheusMetricsFactory(registry: registry)
        var requests: [CoreMetrics.Counter] = []
        for kind in RequestKind.allCases {
            for result in CacheResult.allCases {
                for wire in WireProtocol.allCases {
                    precondition(requests.count == Self.requestIndex(kind, result, wire))
                    requests.append(
                        CoreMetrics.Counter(
                            label: "hlscache_requests_total",
                            dimensions: [
                                ("kind", kind.rawValue), ("cache", result.rawValue), ("protocol", wire.rawValue),
                            ],
                            factory: factory))
                }
            }
        }
        self.requests = requests
        originBytes = CoreMetrics.Counter(label: "hlscache_origin_bytes_total", factory: factory)
        servedBytes = CoreMetrics.Counter(label: "hlscache_served_bytes_total", factory: factory)
        cacheBytes = CoreMetrics.Gauge(label: "hlscache_cache_bytes", factory: factory)
        cacheEntries = CoreMetrics.Gauge(label: "hlscache_cache_entries", factory: factory)
        fillsDeduplicated = CoreMetrics.Counter(label: "hlscache_fills_deduplicated_total", factory: factory)
        diskErrors = CoreMetrics.Counter(label: "hlscache_cache_disk_errors_total", factory: factory)
        diskFullEvictions = CoreMetrics.Counter(label: "hlscache_cache_disk_full_evictions_total", factory: factory)
        playlistRenders = CoreMetrics.Counter(label: "hlscache_playlist_renders_total", factory: factory)
        fillsInFlight = CoreMetrics.Gauge(label: "hlscache_fills_in_flight", factory: factory)
        let factory = factory
        fillCounters = ["refused", "abandoned", "refetched"].map {
            CoreMetrics.Counter(label: "hlscache_fills_\($0)_total", factory: factory)
        }
        eventLoopHits = HitBodyKind.allCases.enumerated().map { index, body in
            precondition(index == body.index)
            return CoreMetrics.Counter(
                label: "hlscache_event_loop_hits_total", dimensions: [("body", body.rawValue)], factory: factory)
        }
        purgedEntries = CoreMetrics.Counter(label: "hlscache_purged_entries_total", factory: factory)
        var purgeRequests: [String: CoreMetrics.Counter] = [:]
        for result in ["ok", "unauthorized", "forbidden", "invalid"] {
            purgeRequests[result] = CoreMetrics.Counter(
                label: "hlscache_purge_requests_total", dimensions: [("result", result)], factory: factory)
        }
        self.purgeRequests = purgeRequests
        fleetReadAheadReceived = CoreMetrics.Counter(
            label: "hlscache_fleet_read_ahead_received_total", factory: factory)
        parkedRequests = CoreMetrics.Counter(label: "hlscache_parked_requests_total", factory: factory)
        eventLoopFillStarts = CoreMetrics.Counter(label: "hlscache_event_loop_fill_starts_total", factory: factory)
        frontHits = CoreMetrics.Counter(label: "hlscache_front_hits_total", factory: factory)
        keptHits = CoreMetrics.Counter(label: "hlscache_kept_hits_total", factory: factory)
        frontMisses = CoreMetrics.Counter(label: "hlscache_front_misses_total", factory: factory)
        responderConnections = CoreMetrics.Counter(label: "hlscache_responder_connections_total", factory: factory)
        cmcd = CMCDMetrics(factory: factory)
        requestDuration = CoreMetrics.Timer(
            label: "hlscache_request_duration_seconds", preferredDisplayUnit: .seconds, factory: factory)
    }

    /// Counts body bytes sent to a client.
    func served(bytes: Int64) {
        servedBytes.increment(by: Int(bytes))
        servedTotal.add(bytes, ordering: .relaxed)
    }

    /// Body bytes sent to clients since start.
    var servedBytesTotal: Int64 { servedTotal.load(ordering: .relaxed) }

    /// Counts a client request by kind, cache result and protocol, with its duration.
    func request(kind: RequestKind, result: CacheResult, protocol wire: WireProtocol, duration: Duration) {
        requests[Self.requestIndex(kind, result, wire)].increment()
        requestDuration.recordNanoseconds(Int64(duration.seconds * 1e9))
    }

    /// The place of `hlscache_requests_total{kind,cache,protocol}` in ``requests``.
    private static func requestIndex(_ kind: RequestKind, _ result: CacheResult, _ wire: WireProtocol) -> Int {
        (kind.index * CacheResult.allCases.count + result.index) * WireProtocol.allCases.count + wire.index
    }

    /// Counts a hit answered on the event loop (`hlscache_event_loop_hits_total`), by how its body was sent.
    func eventLoopHit(body: HitBodyKind) {
        eventLoopHits[body.index].increment()
    }

    /// Counts a hit answered from the connection's bytes (`hlscache_front_hits_total`), by how its body was sent
    /// (`hlscache_event_loop_hits_total`).
    func frontHit(body: HitBodyKind) {
        eventLoopHits[body.index].increment()
        frontHits.increment()
    }

    /// Counts an event-loop hit answered from its thread's kept hit, with no lookup (`hlscache_kept_hits_total`).
    func keptHit() {
        keptHits.increment()
    }

    /// Counts a miss the front answered itself (`hlscache_front_misses_total`).
    func frontMiss() {
        frontMisses.increment()
    }

    /// Counts a connection whose requests needed Hummingbird's handling (`hlscache_responder_connections_total`).
    func responderConnection() {
        responderConnections.increment()
    }

    /// Counts a blocking playlist reload parked on the event loop (`hlscache_parked_requests_total`).
    func parkedRequest() {
        parkedRequests.increment()
    }

    /// Counts a miss whose fill the event loop started (`hlscache_event_loop_fill_starts_total`).
    func eventLoopFillStarted() {
        eventLoopFillStarts.increment()
    }

    /// Counts an admin purge request by result: `ok`, `unauthorized`, `forbidden` or `invalid`.
    func purgeRequest(result: String) {
        purgeRequests[result]?.increment()
    }

    /// Counts a fleet node's read-ahead request queued here.
    func fleetReadAheadQueued() {
        fleetReadAheadReceived.increment()
    }

    /// Counts cache entries removed by a purge.
    func purged(entries: Int) {
        purgedEntries.increment(by: entries)
    }

    /// Counts a request sent to an origin, by HTTP status or, when none came, the error's label.
    func originRequest(status: String) {
        let counter = originRequests.withLock { counters in
            if let counter = counters[status] { return counter }
            let counter = CoreMetrics.Counter(
                label: "hlscache_origin_requests_total", dimensions: [("status", status)], factory: factory)
            counters[status] = counter
            return counter
        }
        counter.increment()
    }

    /// Brings the cache's figures up to date and renders every metric in the Prometheus text format.
    func render(cache: SegmentCache.Statistics) -> [UInt8] {
        cacheBytes.record(cache.bytes)
        cacheEntries.record(cache.entries)
        let (deduplicated, disk, full) = lastSeen.withLock { seen in
            let deltas = (
                cache.deduplicatedFills - seen.deduplicated, cache.diskErrors - seen.diskErrors,
                cache.diskFullEvictions - seen.diskFull
            )
            seen = (cache.deduplicatedFills, cache.diskErrors, cache.diskFullEvictions)
            return deltas
        }
        if deduplicated > 0 { fillsDeduplicated.increment(by: deduplicated) }
        fillsInFlight.record(cache.fillsInFlight)
        let counts = [cache.fillsRefused, cache.abandonedFills, cache.refetchedForOwnURL]
        let before = lastFillCounts.withLock { seen in
            defer { seen = counts }
            return seen
        }
        for (index, counter) in fillCounters.enumerated() where counts[index] > before[index] {
            counter.increment(by: counts[index] - before[index])
        }
        if disk > 0 { diskErrors.increment(by: disk) }
        if full > 0 { diskFullEvictions.increment(by: full) }
        cmcd.refresh()
        var output: [UInt8] = []
        registry.emit(into: &output)
        cmcd.renderHistograms(into: &output)
        return output
    }
}

/// How the event-loop hit path sent a body: with `sendfile` from the entry file, from the memory tier, or none
/// (HEAD).
enum HitBodyKind: String, Sendable, CaseIterable {
    case sendfile, memory, none

    /// The kind's place in `allCases`.
    var index: Int {
        switch self {
        case .sendfile: 0
        case .memory: 1
        case .none: 2
        }
    }
}

extension ServerMetrics: OriginCacheMetrics {
    /// Counts an origin request in `hlscache_origin_requests_total{status}`.
    func countOriginRequest(status: String) { originRequest(status: status) }

    /// Counts origin bytes in `hlscache_origin_bytes_total`.
    func countOriginBytes(_ bytes: Int) { originBytes.increment(by: bytes) }
}
