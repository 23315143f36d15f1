import ArgumentParser
import Foundation
import OriginClient

/// `hlscache`: a playlist-aware HLS caching proxy.
@main
struct HLSCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hlscache",
        abstract: "A playlist-aware HLS caching proxy.",
        version: hlscacheVersion,
        subcommands: [ServeCommand.self, RewriteCommand.self, URLCommand.self]
    )

    /// Runs the command line, with `serve`'s options also taken from `HLSCACHE_*` environment variables.
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "serve" {
            arguments = EnvironmentOption.merged(
                arguments, options: ServeCommand.environmentOptions, environment: ProcessInfo.processInfo.environment)
        }
        await main(arguments)
    }
}
