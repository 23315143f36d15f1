import Foundation
import ManifestURLs
import OriginCache
import OriginClient

/// Everything `hlscache serve` can be told: where to listen, where to cache, which origins to reach
/// and how long playlists stay fresh.
public struct ServerConfiguration: Sendable {
    /// The address to bind; only loopback by default.
    public var host: String = "127.0.0.1"
    /// The port to bind for cleartext HTTP; `0` picks a free one (logged at start).
    public var port: Int = 8080
    /// Whether cleartext HTTP is served on ``port`` (`--port none` turns it off, with ``tls`` set).
    public var servesCleartext = true
    /// HTTPS beside cleartext (`--tls-certificate`, `--tls-key`, `--tls-port`); `nil`: none.
    public var tls: TLSSettings?
    /// The most HTTP/2 streams a client may have open at once on one connection (`--http2-max-streams`, RFC 9113's
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`): 100 by default, as nginx; an LL-HLS client holding a blocking reload per
    /// rendition and part may need more.
    public var http2MaxStreams = 100
    /// The view every manifest is served through (`--manifest-filter`): a request's own `hlscache.*` parameters
    /// narrow it, never widen it. Empty by default.
    public var manifestFilter = ManifestView()
    /// How long the live history keeps what each watched live media playlist listed (`--live-history`, seconds): for
    /// `hlscache.delay` and start-over; 0 keeps none. Two hours by default.
    public var liveHistorySeconds: Double = 7200

    /// Where the server's certificate and key are, and the port HTTPS is served on.
    public struct TLSSettings: Sendable, Equatable {
        /// The PEM certificate chain, leaf first.
        public var certificatePath: String
        /// The PEM private key of the leaf.
        public var keyPath: String
        /// The port to bind for HTTPS; `0` picks a free one (logged at start).
        public var port: Int

        /// - Parameters:
        ///   - certificatePath: the PEM certificate chain, leaf first.
        ///   - keyPath: the PEM private key of the leaf.
        ///   - port: the HTTPS port (8443 by default).
        public init(certificatePath: String, keyPath: String, port: Int = 8443) {
            self.certificatePath = certificatePath
            self.keyPath = keyPath
            self.port = port
        }
    }
    /// How the cache is filled from origins: cache directory and size, allowed origins, origin timeout and access,
    /// object size limit, manifest expiries, cache keys, fill limit, parent and node name. The same value
    /// `prefetch --cache-dir` fills by (``OriginCacheConfiguration``), held here, not copied.
    public var fill: OriginCacheConfiguration = {
        var fill = OriginCacheConfiguration()
        fill.nodeName = FleetHop.randomNodeName()
        return fill
    }()
    /// Reverse mode: paths that are not hlscache's own map onto this origin (`http(s)://host[:port][/prefix]`).
    public var reverseOrigin: String?
    /// The absolute base URL put in front of rewritten URIs; `nil` writes absolute paths (`/o/...`).
    public var publicBaseURL: String?
    /// Segments read ahead per playlist or segment served; `0` turns read-ahead off.
    public var readAheadCount: Int = 2
    /// Background read-ahead fetches at once.
    public var readAheadConcurrency: Int = 4
    /// Whether answers carry CMSD (CTA-5006): `CMSD-Static` and `CMSD-Dynamic` (`--cmsd`).
    public var cmsd = true
    /// Whether a player's CMCD goes on to the origin with a fill its request starts, as the player sent it (query or
    /// fields; `--cmcd-to-origin`). It is never part of a key either way.
    public var cmcdToOrigin = false
    /// Whether a request whose CMCD names the next object (`nor`) queues that object's fill (`--cmcd-prefetch`).
    public var cmcdPrefetch = true
    /// Above this buffer length (CMCD `bl`), `nor` is not prefetched (`--cmcd-prefetch-max-buffer`).
    public var cmcdPrefetchMaxBuffer: Duration = .seconds(30)
    /// The longest request target (path and query) accepted.
    public var maxRequestTargetLength: Int = 8192
    /// How long past its expiry a VOD or multivariant manifest is still answered at once from the stale copy while
    /// one refresh runs (`--playlist-grace`); live manifests have three target durations since they were fetched.
    public var playlistGrace: Duration = .seconds(60)
    /// How long in-flight responses may take to finish after SIGTERM or SIGINT.
    public var shutdownGrace: Duration = .seconds(10)
    /// Access and event log format.
    public var logFormat: LogFormat = .text
    /// Bound of the in-memory tier (rewritten playlists and small hot objects), in bytes.
    public var memoryCacheBytes: Int = 64 << 20
    /// Whether each event loop and the origin-client thread its fetches go to are bound to one processor
    /// (`--cpu-affinity`; ``ThreadPlacement`` decides when `auto` binds). Off by default.
    public var cpuAffinity: CPUAffinity = .off
    /// The most connections served at once (lowered at start to what the open-file limit allows); past it, a new
    /// connection's request is answered 503 and the connection closed.
    public var maxConnections: Int = 4096
    /// How long a connection may take to send a complete request head, from its opening or a request's first byte.
    public var requestHeadTimeout: Duration = .seconds(10)
    /// How long a connection may stay idle between requests.
    public var idleTimeout: Duration = .seconds(60)
    /// How long an answer may make no progress because the client does not read; then the connection closes.
    public var sendTimeout: Duration = .seconds(60)
    /// The bearer token the admin routes (`PURGE`, `POST /admin/purge`) need; without one they do not exist.
    public var adminToken: String?
    /// Which web pages may read answers (`--cors-origin`): any by default.
    public var cors: CORSPolicy = .anyOrigin
    /// The fleet's load balancer (`--fleet-url`, a base URL without trailing slashes): read-ahead is sent there, so
    /// the node that owns each segment fills it; `nil` fills this node's own cache.
    public var fleetURL: String?
    /// The secret fleet nodes share (`--fleet-token`): a read-ahead request is honoured only when it carries it. Without
    /// it, any request with the header is honoured while a fleet is configured (``fleetURL``), and none without one.
    public var fleetToken: String?

    /// Log line formats.
    public enum LogFormat: String, Sendable, CaseIterable {
        /// `key=value` lines for people.
        case text
        /// One JSON object per line for log collectors.
        case json
    }

    /// The default configuration: loopback, port 8080, `./hlscache-cache`, any public origin.
    public init() {}

    /// The cache directory (``fill``'s).
    public var cacheDirectory: String {
        get { fill.cacheDirectory }
        set { fill.cacheDirectory = newValue }
    }

    /// This node's name in `Via` headers (`--node-name`; ``fill``'s, a random one per start unless given).
    public var nodeName: String {
        get { fill.nodeName ?? "" }
        set { fill.nodeName = newValue }
    }

    /// The fill configuration the server's origin gets: ``fill`` with, in reverse mode, the origin's host and port
    /// listed in its address policy. The one place the server's address policy is made.
    ///
    /// The reverse origin is listed exactly with its port, so it is reachable even on a private or loopback
    /// address, and no other port of that host is (another service there, or hlscache itself): that takes an
    /// `--allow-host host:port` of its own. Every other host still needs `allowPrivateNetworks` for that.
    public var originCache: OriginCacheConfiguration {
        var originCache = fill
        if let reverseOrigin, let origin = HTTPOrigin(url: reverseOrigin) {
            originCache.addressPolicy = AddressPolicy(
                allowedHosts: fill.addressPolicy.allowedHosts + [origin.hostAndPort],
                allowPrivateNetworks: fill.addressPolicy.allowPrivateNetworks)
        }
        return originCache
    }
}

/// A byte count with an optional unit: `512`, `64KB`, `10GB`, `1.5GiB`, `100m`.
public enum ByteSize {
    /// Parses a size; decimal units (`KB`, `MB`, `GB`, `TB`) are powers of 1000, binary ones (`KiB`…) of 1024,
    /// single letters (`k`, `m`, `g`, `t`) are binary.
    /// - Returns: the byte count, or `nil` when the text is not a size.
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let digits = trimmed.prefix { $0.isNumber || $0 == "." }
        guard let value = Double(digits), value >= 0 else { return nil }
        let unit = trimmed.dropFirst(digits.count).trimmingCharacters(in: .whitespaces).lowercased()
        let multipliers: [String: Double] = [
            "": 1, "b": 1,
            "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
            "kib": 1024, "mib": 1_048_576, "gib": 1_073_741_824, "tib": 1_099_511_627_776,
            "k": 1024, "m": 1_048_576, "g": 1_073_741_824, "t": 1_099_511_627_776,
        ]
        guard let multiplier = multipliers[unit] else { return nil }
        let bytes = value * multiplier
        guard bytes < 9e18 else { return nil }
        return Int64(bytes)
    }
}

extension ServerConfiguration {
    /// Whether the server binds its threads to processors (`--cpu-affinity`).
    public enum CPUAffinity: String, Sendable, CaseIterable {
        /// Bind each event loop and its origin-client thread to one processor when the process has a processor for
        /// each pair and no CPU quota below that (a machine or a `--cpuset-cpus` container of its own, with nothing
        /// else busy on its processors).
        case auto
        /// Never bind: the scheduler places every thread. The default: a bound loop cannot leave a processor that
        /// players or other programs on the same machine keep busy.
        case off
    }
}
