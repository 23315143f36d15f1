import ArgumentParser
import Foundation
import HLSCacheServer
import Logging
import ManifestURLs
import OriginCache
import OriginClient

/// `hlscache serve`: the caching proxy.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve rewritten playlists and cached segments to HLS players.",
        discussion: """
            Forward mode: GET /o/<scheme>/<host[:port]>/<path> fetches <scheme>://<host[:port]>/<path>.
            Reverse mode (--origin URL): every other path maps onto URL.
            Every option can also be set through an environment variable HLSCACHE_<OPTION>, e.g.
            HLSCACHE_CACHE_DIR=/data or HLSCACHE_ALLOW_HOST=cdn.example.com,*.example.org; the command line wins.
            """
    )

    /// The options that environment variables can set, and how.
    static let environmentOptions: [EnvironmentOption] =
        OriginOptions.environmentOptions + [
            .value("host"), .value("port"), .value("origin"), .value("public-base-url"), .value("read-ahead"),
            .value("read-ahead-concurrency"), .value("prefetch"), .value("prefetch-concurrency"),
            .value("playlist-grace"),
            .value("shutdown-grace"),
            .value("log-format"), .value("log-level"), .value("memory-cache-size"), .flag("no-event-loop-hits"),
            .value("max-connections"), .value("max-fills"), .value("request-head-timeout"), .value("idle-timeout"),
            .value("send-timeout"),
            .repeated("cors-origin"), .value("admin-token"), .value("node-name"), .value("fleet-url"),
            .value("fleet-token"), .value("parent"), .value("parent-ca"), .value("cmcd-prefetch"),
            .value("cmcd-prefetch-max-buffer"),
            .value("cmsd"), .flag("cmcd-to-origin"), .value("tls-certificate"), .value("tls-key"), .value("tls-port"),
            .value("http2-max-streams"), .value("manifest-filter"),
            .value("live-history"),
        ]

    /// ``environmentOptions`` less the variables of options `arguments` give under another name: an old spelling on
    /// the command line (`--prefetch`) wins over the new name's variable (`HLSCACHE_READ_AHEAD`), as the command line
    /// wins over every variable.
    static func environmentOptions(given arguments: [String]) -> [EnvironmentOption] {
        let aliases: [(given: String, covers: EnvironmentOption)] = [
            ("--prefetch", .value("read-ahead")), ("--prefetch-concurrency", .value("read-ahead-concurrency")),
            ("--read-ahead", .value("prefetch")), ("--read-ahead-concurrency", .value("prefetch-concurrency")),
        ]
        let covered = aliases.filter { alias in
            arguments.contains { $0 == alias.given || $0.hasPrefix(alias.given + "=") }
        }.map(\.covers)
        return environmentOptions.filter { !covered.contains($0) }
    }

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "Port to listen on for cleartext HTTP (0: any free port; none: no cleartext, with TLS only).")
    var port = "8080"

    @Option(help: "PEM file of the server's certificate chain: with --tls-key, HTTPS on --tls-port too.")
    var tlsCertificate: String?

    @Option(help: "PEM file of the certificate's private key.")
    var tlsKey: String?

    @Option(help: "Port to listen on for HTTPS, with --tls-certificate and --tls-key.")
    var tlsPort = 8443

    @Option(help: "The most HTTP/2 streams a client may have open at once on one connection (1 to 10000).")
    var http2MaxStreams = 100

    @Option(
        help: ArgumentHelp(
            "The view every manifest is served through, as hlscache.* query parameters (a request's own narrow it).",
            valueName: "hlscache.name=value&..."))
    var manifestFilter: String?

    @Option(
        help: ArgumentHelp(
            "How long the live history keeps each watched live playlist's segments, for hlscache.delay and start-over "
                + "(seconds, or with s, m, h; 0: none).", valueName: "duration"))
    var liveHistory = "2h"

    @OptionGroup(title: "Cache and origins")
    var shared: OriginOptions

    @Option(help: "Reverse mode: map every path that is not hlscache's own onto this origin URL.")
    var origin: String?

    @Option(help: "Absolute base URL for rewritten URIs (default: absolute paths, /o/...).")
    var publicBaseURL: String?

    @Option(help: "Segments to read ahead (0: off).")
    var readAhead: Int?

    @Option(help: "Read-ahead fetches at once.")
    var readAheadConcurrency: Int?

    @Option(help: .hidden)
    var prefetch: Int?

    @Option(help: .hidden)
    var prefetchConcurrency: Int?

    /// What the deprecated spellings of `--read-ahead` and `--read-ahead-concurrency` (the names of the `prefetch`
    /// command's job) and the retired `--no-event-loop-hits` deserve: a warning line each, logged at start.
    var deprecations: [String] {
        var lines: [String] = []
        if prefetch != nil {
            lines.append("--prefetch (HLSCACHE_PREFETCH) is deprecated: use --read-ahead (HLSCACHE_READ_AHEAD)")
        }
        if prefetchConcurrency != nil {
            lines.append(
                "--prefetch-concurrency (HLSCACHE_PREFETCH_CONCURRENCY) is deprecated: use --read-ahead-concurrency "
                    + "(HLSCACHE_READ_AHEAD_CONCURRENCY)")
        }
        if noEventLoopHits {
            lines.append(
                "--no-event-loop-hits (HLSCACHE_NO_EVENT_LOOP_HITS) no longer does anything: every request a "
                    + "connection's front reads is answered there")
        }
        return lines
    }

    @Option(
        help: """
            Seconds past its expiry a VOD or multivariant playlist is still answered at once from the stale copy \
            while one refresh runs (live playlists: three target durations since they were fetched).
            """)
    var playlistGrace: Double = 60

    @Option(help: "Seconds in-flight responses get to finish after SIGTERM or SIGINT.")
    var shutdownGrace: Double = 10

    @Option(help: "Log format: text or json.")
    var logFormat = "text"

    @Option(help: "Lowest log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    @Option(help: "In-memory tier for rewritten playlists and small hot objects, with a unit.")
    var memoryCacheSize = "64MB"

    @Flag(help: .hidden)
    var noEventLoopHits = false

    @Option(
        help: """
            Bind each event loop and its origin thread to one processor: auto (when the process has a processor for \
            each pair; for a machine that runs nothing else busy) or off.
            """)
    var cpuAffinity = "off"

    @Option(help: "Most connections served at once (also bounded by the open-file limit, raised at start).")
    var maxConnections = 4096

    @Option(
        help: """
            Most origin fetches in flight at once (also bounded by the open-file limit); past it a miss is answered \
            503 with Retry-After.
            """)
    var maxFills = 1024

    @Option(help: "Seconds a connection may take to send a complete request head.")
    var requestHeadTimeout: Double = 10

    @Option(help: "Seconds a keep-alive connection may stay idle between requests.")
    var idleTimeout: Double = 60

    @Option(help: "Seconds an answer may make no progress because the client does not read.")
    var sendTimeout: Double = 60

    @Option(
        help: """
            Web page origin allowed to read answers (repeatable): * (the default, any page), an origin such as \
            https://site.example, or none for no CORS headers.
            """)
    var corsOrigin: [String] = []

    @Option(
        help: """
            Bearer token for the admin routes: PURGE <proxied URL> and POST /admin/purge?prefix=<URL>. Without it \
            those routes do not exist. Prefer HLSCACHE_ADMIN_TOKEN: a command line is visible to every local user.
            """)
    var adminToken: String?

    @Option(help: "This node's name in Via headers (default: hlscache- and 8 random hex digits, new each start).")
    var nodeName: String?

    @Option(
        help: """
            Fleet: the load balancer's URL every node can reach. Read-ahead is sent there so the node that owns \
            each segment fills it (default: --public-base-url when set; none: off).
            """)
    var fleetURL: String?

    @Option(
        help: """
            Fleet: a secret every node shares; a read-ahead request from another node is honoured only with it. \
            Without it, read-ahead requests are honoured from anyone while --fleet-url is set (never without it). \
            Prefer HLSCACHE_FLEET_TOKEN.
            """)
    var fleetToken: String?

    @Option(help: "Shield tier: a parent hlscache's base URL that every origin fetch goes through.")
    var parent: String?

    @Option(
        help: """
            With an https --parent: a PEM file of the CA that signed the parent's certificate (a private CA). \
            Without it, the system's CAs verify the parent.
            """)
    var parentCa: String?

    @Option(help: "on: a player's CMCD next-object request (nor) queues that object's fill; off: it does not.")
    var cmcdPrefetch = "on"

    @Option(help: "Seconds of buffer (CMCD bl) above which a player's nor is not prefetched.")
    var cmcdPrefetchMaxBuffer: Double = 30

    @Flag(
        help:
            "Pass a player's CMCD on to the origin with a fill its request starts, as the player sent it (query or headers); never part of a key."
    )
    var cmcdToOrigin = false

    @Option(help: "on: answers carry CMSD-Static and CMSD-Dynamic (CTA-5006); off: they do not.")
    var cmsd = "on"

    /// A duration in seconds: a number, or a number with `s`, `m` or `h`.
    static func duration(_ text: String) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        var number = Substring(text)
        var unit = 1.0
        if let last = text.last, let scale = units[last] {
            unit = scale
            number = number.dropLast()
        }
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let value = Double(number), value.isFinite
        else { return nil }
        return value * unit
    }

    func validate() throws {
        _ = try makeConfiguration()
    }

    func makeConfiguration() throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.host = host
        if port == "none" {
            configuration.servesCleartext = false
        } else {
            guard let number = Int(port), (0...65535).contains(number) else {
                throw ValidationError("--port must be 0...65535 or none")
            }
            configuration.port = number
        }
        guard (1...10_000).contains(http2MaxStreams) else {
            throw ValidationError("--http2-max-streams must be 1...10000 (got \(http2MaxStreams))")
        }
        configuration.http2MaxStreams = http2MaxStreams
        guard let history = Self.duration(liveHistory), history <= 7 * 86_400 else {
            throw ValidationError("--live-history must be seconds (or with s, m, h) up to a week, 0 for none")
        }
        configuration.liveHistorySeconds = history
        if let manifestFilter {
            configuration.manifestFilter = try ViewOption.parse(
                manifestFilter, option: "--manifest-filter",
                timeline: "a delay, start or end is a viewer's choice, not the server's: use the filters or "
                    + "hlscache.window")
        }
        switch (tlsCertificate, tlsKey) {
        case (let certificate?, let key?):
            guard (0...65535).contains(tlsPort) else { throw ValidationError("--tls-port must be 0...65535") }
            configuration.tls = ServerConfiguration.TLSSettings(
                certificatePath: certificate, keyPath: key, port: tlsPort)
        case (nil, nil):
            guard configuration.servesCleartext else {
                throw ValidationError("--port none needs --tls-certificate and --tls-key: nothing would be served")
            }
        default:
            throw ValidationError("--tls-certificate and --tls-key go together")
        }
        if let origin {
            guard HTTPOrigin(url: origin) != nil else {
                throw ValidationError("--origin must be an absolute http(s) URL: \(origin)")
            }
            configuration.reverseOrigin = origin
        }
        let nodeName = configuration.nodeName
        configuration.fill = try shared.originCache(
            directory: shared.cacheDir ?? OriginOptions.defaultCacheDirectory,
            policy: AddressPolicy(allowedHosts: shared.hosts(), allowPrivateNetworks: shared.allowPrivateNetworks),
            naming: OriginOptions.hostAndPort(of: origin))
        configuration.nodeName = nodeName
        configuration.publicBaseURL = publicBaseURL
        let readAhead = self.readAhead ?? prefetch ?? 2
        let readAheadConcurrency = self.readAheadConcurrency ?? prefetchConcurrency ?? 4
        guard readAhead >= 0, readAheadConcurrency > 0 else {
            throw ValidationError("--read-ahead must be 0 or more, --read-ahead-concurrency 1 or more")
        }
        configuration.readAheadCount = readAhead
        configuration.readAheadConcurrency = readAheadConcurrency
        guard cmcdPrefetch == "on" || cmcdPrefetch == "off" else {
            throw ValidationError("--cmcd-prefetch must be on or off")
        }
        configuration.cmcdPrefetch = cmcdPrefetch == "on"
        configuration.cmcdToOrigin = cmcdToOrigin
        guard cmsd == "on" || cmsd == "off" else { throw ValidationError("--cmsd must be on or off") }
        configuration.cmsd = cmsd == "on"
        configuration.cmcdPrefetchMaxBuffer = try OriginOptions.seconds(
            cmcdPrefetchMaxBuffer, "--cmcd-prefetch-max-buffer")
        configuration.memoryCacheBytes = Int(try OriginOptions.size(memoryCacheSize, "--memory-cache-size"))
        guard let affinity = ServerConfiguration.CPUAffinity(rawValue: cpuAffinity) else {
            throw ValidationError("--cpu-affinity must be auto or off")
        }
        configuration.cpuAffinity = affinity
        configuration.shutdownGrace = try OriginOptions.seconds(shutdownGrace, "--shutdown-grace")
        configuration.playlistGrace = try OriginOptions.seconds(playlistGrace, "--playlist-grace")
        guard maxConnections > 0 else { throw ValidationError("--max-connections must be 1 or more") }
        configuration.maxConnections = maxConnections
        guard (1...1_000_000).contains(maxFills) else { throw ValidationError("--max-fills must be 1 to 1000000") }
        configuration.fill.maxFills = maxFills
        configuration.requestHeadTimeout = try OriginOptions.seconds(
            requestHeadTimeout, "--request-head-timeout", minimum: 0.001)
        configuration.idleTimeout = try OriginOptions.seconds(idleTimeout, "--idle-timeout", minimum: 0.001)
        configuration.sendTimeout = try OriginOptions.seconds(sendTimeout, "--send-timeout", minimum: 0.001)
        guard let format = ServerConfiguration.LogFormat(rawValue: logFormat) else {
            throw ValidationError("--log-format must be text or json")
        }
        configuration.logFormat = format
        configuration.cors = try CORSPolicy(arguments: corsOrigin)
        if let adminToken {
            guard adminToken.utf8.count >= 16, adminToken.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                throw ValidationError("--admin-token must be at least 16 printable ASCII characters without spaces")
            }
            configuration.adminToken = adminToken
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        try configureFleet(&configuration)
        return configuration
    }

    /// `--node-name`, `--fleet-url` and `--parent`.
    private func configureFleet(_ configuration: inout ServerConfiguration) throws {
        do {
            if let nodeName {
                guard FleetHop.isValidName(nodeName) else {
                    throw ValidationError("--node-name must be 1 to 64 letters, digits, '.', '-' or '_'")
                }
                configuration.nodeName = nodeName
            }
            switch fleetURL ?? publicBaseURL {
            case nil, "none": configuration.fleetURL = nil
            case let url?: configuration.fleetURL = try ParentTier.base(of: url, option: "--fleet-url").base
            }
            if let fleetToken {
                guard fleetToken.utf8.count >= 16, fleetToken.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
                    throw ValidationError("--fleet-token must be at least 16 printable ASCII characters without spaces")
                }
                configuration.fleetToken = fleetToken
            }
            if let parent {
                let tier = try ParentTier(url: parent, nodeName: configuration.nodeName)
                let port = HTTPOrigin(url: tier.base)?.port ?? 80
                let selves: Set<String> = [host, "localhost", "127.0.0.1", "::1", "[::1]", "0.0.0.0"]
                guard !(port == Int(self.port) && selves.contains(tier.host)) else {
                    throw ValidationError("--parent \(parent) is this node itself: a node cannot be its own parent")
                }
                configuration.fill.parent = tier
            }
            if let parentCa {
                guard var tier = configuration.fill.parent, tier.base.lowercased().hasPrefix("https://") else {
                    throw ValidationError(
                        "--parent-ca goes with an https --parent: it verifies the parent's certificate")
                }
                let pem = (try? String(contentsOfFile: parentCa, encoding: .utf8)) ?? ""
                guard pem.contains("-----BEGIN CERTIFICATE-----") else {
                    throw ValidationError("--parent-ca \(parentCa) is not a readable PEM certificate file")
                }
                tier.certificateAuthority = parentCa
                configuration.fill.parent = tier
            }
        } catch let error as FleetConfigurationError {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let invocation = try ServeInvocation(command: self)
        let configuration = invocation.configuration
        LoggingSystem.bootstrap { label in invocation.logHandler(label: label) }
        let logger = invocation.logger()
        for line in invocation.warnings { logger.warning("deprecated option", metadata: ["reason": "\(line)"]) }
        let server: HLSCacheServer
        do {
            server = try HLSCacheServer(configuration: configuration, logger: logger)
        } catch {
            logger.critical("cannot start", metadata: ["error": "\(error)"])
            throw ExitCode(70)
        }
        do {
            try await server.run()
        } catch {
            LineLogHandler.flush()
            throw error
        }
        LineLogHandler.flush()
        // Everything is written (the cache index, the logs): leave without running exit handlers,
        // which libraries' threads could hold up past the shutdown grace the operator was promised.
        fflush(nil)
        _exit(0)
    }
}
