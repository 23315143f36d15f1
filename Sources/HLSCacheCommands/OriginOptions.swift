import ArgumentParser
import Foundation
import HLSCacheServer
import OriginCache
import OriginClient

/// The options `serve` and `prefetch` share: where the cache is, how large, which origins may be reached and how
/// long they may take. Declared once, validated once, each also settable as `HLSCACHE_<OPTION>`.
struct OriginOptions: ParsableArguments {
    @Option(help: "Cache directory (serve: default ./hlscache-cache; prefetch: fill it, as serve would).")
    var cacheDir: String?

    @Option(help: "Cache size bound, with a unit: 500MB, 10GB, 1TiB.")
    var maxCacheSize = "10GB"

    @Option(help: "Origin host pattern to allow (repeatable): host, *.domain, or * for any public host.")
    var allowHost: [String] = []

    @Flag(help: "Let allowed hosts resolve to private, loopback and unique-local addresses.")
    var allowPrivateNetworks = false

    @Option(help: "Origin connect plus first-byte timeout, seconds.")
    var originTimeout: Double = 10

    @Option(
        help: """
            Header for origin requests (repeatable): 'Name: value', or 'host-pattern=Name: value' for the hosts of \
            one pattern only. Values are never logged.
            """)
    var originHeader: [String] = []

    @Option(help: "User-Agent for origin requests (default hlscache/<version>).")
    var userAgent: String?

    @Option(
        help: """
            Upstream proxy for origin requests: http://, https:// or socks5h:// (user:password@ allowed); NO_PROXY \
            lists hosts reached directly. The proxy resolves names: only host patterns and IP literals are checked.
            """)
    var upstreamProxy: String?

    @Option(
        help: """
            Threads fetching from origins, each with its own connections (default: one per core, at most 4). One \
            thread copies every byte twice; on a fast link it is the ceiling.
            """)
    var originThreads: Int?

    @Option(
        help: """
            Query parameter left out of the cache key of segments, keys and other objects (repeatable; * matches \
            any run of characters: token, X-Amz-*): viewers with different tokens share one cached object, and the \
            origin is asked with the first viewer's full URL.
            """)
    var cacheKeyIgnoreQuery: [String] = []

    @Option(
        help: """
            Query parameter left out of the cache key of playlists and MPDs (.m3u8, .m3u, .mpd paths; repeatable): \
            viewers then share one rewritten playlist, tokens in its URIs included.
            """)
    var playlistCacheKeyIgnoreQuery: [String] = []

    @Option(help: "Largest object fetched, with a unit.")
    var maxObjectSize = "512MiB"

    @Option(help: "Freshness of VOD media playlists when the origin gives none, seconds.")
    var vodPlaylistTTL: Double = 86400

    @Option(help: "Freshness of multivariant playlists when the origin gives none, seconds.")
    var multivariantPlaylistTTL: Double = 60

    @Option(help: "Seconds a 404 or 410 for a segment or other non-manifest object is remembered (0: never).")
    var negativeTTL: Double = 10

    @Option(
        help: """
            Seconds a VOD or multivariant playlist or MPD may take to arrive in all before a 504 (live playlists: \
            their target duration, at least 3 s).
            """)
    var manifestTimeout: Double = 15

    /// `host:port` of an absolute http(s) URL (the scheme's default port when it names none; an IPv6 host in
    /// brackets): what an unscoped origin header is scoped to for a host the operator named by a URL.
    static func hostAndPort(of url: String?) -> [String] {
        guard let url, let origin = HTTPOrigin(url: url) else { return [] }
        return [origin.hostAndPort]
    }

    /// The options environment variables may set, for commands that take all of them.
    static let environmentOptions: [EnvironmentOption] = [
        .value("cache-dir"), .value("max-cache-size"), .repeated("allow-host"), .flag("allow-private-networks"),
        .value("origin-timeout"), .lines("origin-header"), .value("user-agent"), .value("upstream-proxy"),
        .value("origin-threads"),
        .repeated("cache-key-ignore-query"), .repeated("playlist-cache-key-ignore-query"),
        .value("max-object-size"), .value("vod-playlist-ttl"), .value("multivariant-playlist-ttl"),
        .value("negative-ttl"), .value("manifest-timeout"),
    ]

    /// The default cache directory.
    static let defaultCacheDirectory = "./hlscache-cache"

    func validate() throws {
        _ = try maxCacheBytes()
        _ = try timeout()
        _ = try originAccess()
        _ = try cacheKeys()
        _ = try fillRules(OriginCacheConfiguration())
    }

    /// `--cache-key-ignore-query` and `--playlist-cache-key-ignore-query`, checked.
    func cacheKeys() throws -> CacheKeyPolicy {
        do throws(InvalidQueryNamePattern) {
            return CacheKeyPolicy(
                ignoredQuery: try cacheKeyIgnoreQuery.map { text throws(InvalidQueryNamePattern) in
                    try QueryNamePattern(text)
                },
                ignoredManifestQuery: try playlistCacheKeyIgnoreQuery.map { text throws(InvalidQueryNamePattern) in
                    try QueryNamePattern(text)
                })
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// `--origin-header`, `--user-agent`, `--upstream-proxy` and `NO_PROXY`, checked.
    func originAccess() throws -> OriginAccess {
        var access = OriginAccess()
        do {
            access.headers = try originHeader.map { text throws(InvalidOriginHeader) in try OriginHeader(parsing: text)
            }
        } catch {
            throw ValidationError(error.description)
        }
        if let userAgent {
            guard !userAgent.isEmpty, !userAgent.contains(where: { $0 == "\r" || $0 == "\n" }) else {
                throw ValidationError("--user-agent must be one non-empty line")
            }
            access.userAgent = userAgent
        }
        if let upstreamProxy {
            guard let components = URLComponents(string: upstreamProxy),
                OriginAccess.proxySchemes.contains(components.scheme ?? ""), components.host?.isEmpty == false
            else {
                throw ValidationError(
                    "--upstream-proxy must be a URL such as http://proxy:3128 or socks5h://proxy:1080")
            }
            access.proxy = upstreamProxy
            access.noProxy = OriginClientConfiguration.noProxy(environment: ProcessInfo.processInfo.environment)
        }
        if let originThreads {
            guard (1...64).contains(originThreads) else { throw ValidationError("--origin-threads must be 1 to 64") }
            access.workerThreads = originThreads
        }
        return access
    }

    /// ``originAccess()`` with every unscoped `--origin-header` (`Name: value`) scoped to the hosts named exactly:
    /// `named` (the reverse origin's host, the stream a prefetch was given) and the exact `--allow-host` patterns. A
    /// credential for every host would otherwise reach any host a viewer names.
    /// - Parameter named: hosts the operator named on the command line besides `--allow-host`, as `host:port`
    ///   (``hostAndPort(of:)``): the header goes to that port only.
    /// - Throws: `ValidationError` when an unscoped header has no such host to go to while the allowed hosts hold a
    ///   wildcard (the default `*`): the message names the header (never its value) and says how to scope it.
    func scopedOriginAccess(naming named: [String]) throws -> OriginAccess {
        var access = try originAccess()
        let unscoped = access.headers.filter(\.isUnscoped)
        guard !unscoped.isEmpty else { return access }
        let patterns = hosts()
        let exact = patterns.filter { !$0.contains("*") }
        if named.isEmpty, exact.count < patterns.count {
            let names = unscoped.map(\.name).joined(separator: ", ")
            throw ValidationError(
                "--origin-header \(names) has no host pattern, and the allowed hosts (\(patterns.joined(separator: ", "))) "
                    + "let a viewer name any host: it would be sent there too. Scope it: "
                    + "'cdn.example.com=\(unscoped[0].name): …' (or '*.example.com=…'), or list the hosts with --allow-host"
            )
        }
        let scope = Array(Set(named + exact)).sorted()
        access.headers = access.headers.flatMap { header in
            header.isUnscoped ? scope.map { header.scoped(to: $0) } : [header]
        }
        return access
    }

    /// `--max-cache-size` in bytes.
    func maxCacheBytes() throws -> Int64 {
        guard let bytes = ByteSize.parse(maxCacheSize), bytes > 0 else {
            throw ValidationError("--max-cache-size must be a size such as 512MB or 10GB, not \(maxCacheSize)")
        }
        return bytes
    }

    /// `--origin-timeout` as a duration: from 0.1 s to 1e9 s.
    func timeout() throws -> Duration {
        guard originTimeout.isFinite, originTimeout >= 0.1, originTimeout <= 1e9 else {
            throw ValidationError("--origin-timeout must be a number of seconds from 0.1 to 1e9")
        }
        return .milliseconds(Int64(originTimeout * 1000))
    }

    /// The allowed host patterns (`*` when none is given), plus `extra`.
    func hosts(adding extra: [String] = []) -> [String] {
        (allowHost.isEmpty ? ["*"] : allowHost) + extra
    }

    /// The fill policy's configuration for a cache in `directory`.
    /// - Parameters:
    ///   - directory: the cache directory.
    ///   - policy: the address policy.
    ///   - named: the hosts unscoped origin headers go to besides exact `--allow-host` patterns
    ///     (``scopedOriginAccess(naming:)``).
    func originCache(
        directory: String, policy: AddressPolicy, naming named: [String]
    ) throws
        -> OriginCacheConfiguration
    {
        var configuration = OriginCacheConfiguration()
        configuration.cacheDirectory = directory
        configuration.maxCacheBytes = try maxCacheBytes()
        configuration.addressPolicy = policy
        configuration.originTimeout = try timeout()
        configuration.originAccess = try scopedOriginAccess(naming: named)
        configuration.cacheKeys = try cacheKeys()
        return try fillRules(configuration)
    }

    /// `configuration` with the fill rules of the options: the object size limit, the expiries and the manifest
    /// timeout.
    func fillRules(_ configuration: OriginCacheConfiguration) throws -> OriginCacheConfiguration {
        var configuration = configuration
        configuration.maxObjectBytes = try Self.size(maxObjectSize, "--max-object-size")
        configuration.vodPlaylistTTL = try Self.seconds(vodPlaylistTTL, "--vod-playlist-ttl")
        configuration.multivariantPlaylistTTL = try Self.seconds(multivariantPlaylistTTL, "--multivariant-playlist-ttl")
        configuration.negativeTTL = try Self.seconds(negativeTTL, "--negative-ttl")
        configuration.manifestTimeout = try Self.seconds(manifestTimeout, "--manifest-timeout", minimum: 0.1)
        return configuration
    }

    /// A size option (`512MB`, `10GB`) in bytes, more than 0.
    static func size(_ text: String, _ flag: String) throws -> Int64 {
        guard let bytes = ByteSize.parse(text), bytes > 0 else {
            throw ValidationError("\(flag) must be a size such as 512MB or 10GB, not \(text)")
        }
        return bytes
    }

    /// A seconds option as a duration, from `minimum` to 1e9 s.
    static func seconds(_ value: Double, _ flag: String, minimum: Double = 0) throws -> Duration {
        guard value.isFinite, value >= minimum, value <= 1e9 else {
            throw ValidationError("\(flag) must be a number of seconds from \(minimum) to 1e9")
        }
        return .milliseconds(Int64(value * 1000))
    }
}
