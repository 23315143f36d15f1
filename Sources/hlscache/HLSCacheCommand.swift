import ArgumentParser

/// `hlscache`: a playlist-aware HLS caching proxy.
@main
struct HLSCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hlscache",
        abstract: "A playlist-aware HLS caching proxy.",
        version: HLSCacheVersion.current,
        subcommands: [RewriteCommand.self, URLCommand.self]
    )
}

/// The version of hlscache, as printed by `--version` and sent in `User-Agent`.
enum HLSCacheVersion {
    static let current = "0.1.0"
}
