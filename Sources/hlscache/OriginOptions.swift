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

    /// The options environment variables may set, for commands that take all of them.
    static let environmentOptions: [EnvironmentOption] = [
        .value("cache-dir"), .value("max-cache-size"), .repeated("allow-host"), .flag("allow-private-networks"),
        .value("origin-timeout"),
    ]

    /// The default cache directory.
    static let defaultCacheDirectory = "./hlscache-cache"

    func validate() throws {
        _ = try maxCacheBytes()
        _ = try timeout()
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
    func originCache(directory: String, policy: AddressPolicy) throws -> OriginCacheConfiguration {
        var configuration = OriginCacheConfiguration()
        configuration.cacheDirectory = directory
        configuration.maxCacheBytes = try maxCacheBytes()
        configuration.addressPolicy = policy
        configuration.originTimeout = try timeout()
        return configuration
    }
}
