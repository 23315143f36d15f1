import ArgumentParser
import Foundation
import OriginClient
import SegmentCache

/// `hlscache`: a playlist-aware HLS caching proxy.
public struct HLSCacheCommand: AsyncParsableCommand {
    /// The command's name, version and subcommands.
    public static let configuration = CommandConfiguration(
        commandName: "hlscache",
        abstract: "A playlist-aware HLS caching proxy.",
        version: hlscacheVersion,
        subcommands: [ServeCommand.self, PrefetchCommand.self, RewriteCommand.self, URLCommand.self]
    )

    /// Runs the command line, with `serve`'s options and `prefetch`'s shared ones also taken from `HLSCACHE_*`
    /// environment variables.
    public static func runCommandLine() async {
        HeapRetention.keepFreedMemory()
        var arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "serve" {
            arguments = EnvironmentOption.merged(
                arguments, options: ServeCommand.environmentOptions(given: arguments),
                environment: ProcessInfo.processInfo.environment)
        }
        if arguments.first == "prefetch" {
            // Not HLSCACHE_CACHE_DIR: --cache-dir chooses where prefetch writes; the variable is its default.
            arguments = EnvironmentOption.merged(
                arguments, options: OriginOptions.environmentOptions.filter { $0 != .value("cache-dir") },
                environment: ProcessInfo.processInfo.environment)
            await runPrefetch(arguments)
        }
        await main(arguments)
    }

    /// A command with no subcommand chosen.
    public init() {}

    /// `prefetch` exits 2 on bad usage (ArgumentParser's default is 64), as its documentation promises.
    private static func runPrefetch(_ arguments: [String]) async -> Never {
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            Foundation.exit(0)
        } catch {
            // Help, --version and the command's own exit codes as ArgumentParser handles them; usage errors: 2.
            if error is ExitCode || exitCode(for: error) == .success { exit(withError: error) }
            FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
            Foundation.exit(2)
        }
    }
}
