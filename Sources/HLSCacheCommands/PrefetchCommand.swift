import ArgumentParser
import Foundation
import HLSCacheServer
import HLSPrefetch
import Logging
import ManifestURLs
import OriginCache
import OriginClient
import UnixSignals

/// `hlscache prefetch`: warm a cache, make an offline copy, record a live stream.
struct PrefetchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefetch",
        abstract: "Fetch a stream's segments, keys and init sections into a cache, a server, or a folder.",
        discussion: """
            Destinations (one): --cache-dir DIR (the directory `hlscache serve` reads; default: $HLSCACHE_CACHE_DIR,
            else ./hlscache-cache), --server BASE_URL (pull through a running hlscache), --output DIR (a folder any
            HLS player opens offline: DIR/index.m3u8; for a static DASH MPD, DIR/manifest.mpd). A rerun fetches only
            what is missing. A static MPD's Representations are chosen with --variants, per AdaptationSet; dynamic
            (live) MPDs are not recorded yet.
            Live streams are followed until --duration passes, the stream ends, or SIGINT; with --output the
            recording is an EVENT playlist finished with EXT-X-ENDLIST.
            Exit status: 0 everything stored, 1 something failed (listed), 2 bad usage or an invalid playlist.
            """
    )

    @Argument(help: "The stream's playlist URL (multivariant or media), or a static DASH MPD's URL.")
    var url: String

    @OptionGroup(title: "Cache and origins")
    var shared: OriginOptions

    @Option(help: "Pull through this running hlscache, e.g. http://127.0.0.1:8080.")
    var server: String?

    @Option(help: "Write a self-contained folder: DIR/index.m3u8 (DASH: DIR/manifest.mpd) plays offline.")
    var output: String?

    @Option(help: "Variants: all, best, worst, or a maximum bandwidth (bits/s: 800000, 800k, 2.5M).")
    var variants = "all"

    @Option(help: "Audio renditions: all, or default (each group's DEFAULT=YES one).")
    var audio = "all"

    @Option(help: "Subtitle renditions: all or none.")
    var subtitles = "all"

    @Option(
        help: ArgumentHelp(
            "A manifest view to walk the stream through, as hlscache.* query parameters (filters and "
                + "hlscache.window), as the server shows it.", valueName: "hlscache.name=value&..."))
    var view: String?

    @Flag(help: "Also fetch I-frame playlists.")
    var iframes = false

    @Option(help: "Objects fetched at once.")
    var concurrency = 8

    @Option(help: "Retries of a failed fetch (transport errors, 5xx, 408, 429), with doubling delays.")
    var retries = 3

    @Option(help: "How long to follow a live stream: 90, 30s, 10m, 1h30m (default: until it ends).")
    var duration: String?

    @Option(help: "Give up a live playlist after it has failed to refresh for this long.")
    var liveGiveUp = "30s"

    @Flag(help: "No progress output (failures are still reported).")
    var quiet = false

    @Flag(help: "Print a JSON summary on standard output at the end.")
    var json = false

    func validate() throws {
        let destinations = [shared.cacheDir, server, output].compactMap { $0 }
        guard destinations.count <= 1 else { throw ValidationError("choose one of --cache-dir, --server, --output") }
        _ = try makeOptions()
    }

    func makeOptions() throws -> PrefetchOptions {
        var options = PrefetchOptions()
        guard let selection = PrefetchOptions.VariantSelection(parsing: variants) else {
            throw ValidationError("--variants must be all, best, worst or a bandwidth, not \(variants)")
        }
        options.variants = selection
        guard let audio = PrefetchOptions.AudioSelection(rawValue: audio) else {
            throw ValidationError("--audio must be all or default, not \(audio)")
        }
        options.audio = audio
        guard let subtitles = PrefetchOptions.SubtitleSelection(rawValue: subtitles) else {
            throw ValidationError("--subtitles must be all or none, not \(subtitles)")
        }
        options.subtitles = subtitles
        options.iFrames = iframes
        if let view {
            options.view = try ViewOption.parse(
                view, option: "--view", timeline: "a delay, start or end needs the server's live history")
        }
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1 to 256") }
        options.concurrency = concurrency
        guard (0...20).contains(retries) else { throw ValidationError("--retries must be 0 to 20") }
        options.retries = retries
        if let duration {
            guard let value = DurationText.parse(duration) else {
                throw ValidationError("--duration must be a duration such as 90, 30s, 10m or 1h30m, not \(duration)")
            }
            options.duration = value
        }
        guard let giveUp = DurationText.parse(liveGiveUp) else {
            throw ValidationError("--live-give-up must be a duration such as 30s, not \(liveGiveUp)")
        }
        options.liveGiveUp = giveUp
        return options
    }

    func run() async throws {
        let options = try makeOptions()
        let reporter = ProgressReporter(quiet: quiet)
        let destination: PrefetchDestination
        do {
            destination = try makeDestination()
        } catch {
            reporter.error("cannot start: \(error)")
            throw ExitCode(2)
        }
        let prefetcher: Prefetcher
        do {
            prefetcher = try Prefetcher(
                url: url, destination: destination, options: options,
                log: { [quiet] line in
                    if !quiet || line.hasPrefix("failed") { reporter.error(line) }
                })
        } catch {
            reporter.error("\(error)")
            throw ExitCode(2)
        }
        let signals = Task {
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                reporter.error("stopping: finishing what is recorded (interrupt again to quit at once)")
                if prefetcher.requestStop() { Foundation.exit(130) }
            }
        }
        let progress = Task { await reporter.report(prefetcher) }
        let summary: PrefetchSummary
        do {
            summary = try await prefetcher.run()
        } catch {
            progress.cancel()
            signals.cancel()
            reporter.error("error: \(error)")
            throw ExitCode(error.reason == .entryUnavailable ? 1 : 2)
        }
        progress.cancel()
        _ = await progress.value
        signals.cancel()
        reporter.finish(summary)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            if let data = try? encoder.encode(summary) {
                FileHandle.standardOutput.write(data + Data("\n".utf8))
            }
        }
        if summary.exitCode != 0 { throw ExitCode(summary.exitCode) }
    }

    private func makeDestination() throws -> PrefetchDestination {
        // The stream's own host, and the server's: where the operator's unscoped origin headers go.
        let named = OriginOptions.hostAndPort(of: url) + OriginOptions.hostAndPort(of: server)
        let policy = AddressPolicy(
            allowedHosts: shared.hosts(adding: server.flatMap { HTTPOrigin(url: $0)?.host }.map { [$0] } ?? []),
            allowPrivateNetworks: shared.allowPrivateNetworks)
        let timeouts = OriginTimeouts(originTimeout: try shared.timeout())
        if let server {
            guard HTTPOrigin(url: server) != nil else {
                throw ValidationError("--server must be a URL such as http://127.0.0.1:8080")
            }
            var configuration = OriginClientConfiguration(policy: policy, timeouts: timeouts)
            configuration.apply(try shared.scopedOriginAccess(naming: named))
            configuration.maxRetries = 0  // the prefetcher retries with backoff itself
            return .server(baseURL: server, client: try OriginClient(configuration: configuration))
        }
        if let output {
            var configuration = OriginClientConfiguration(policy: policy, timeouts: timeouts)
            configuration.apply(try shared.scopedOriginAccess(naming: named))
            configuration.maxRetries = 0
            return .output(directory: output, client: try OriginClient(configuration: configuration))
        }
        // The image sets HLSCACHE_CACHE_DIR for the server; a prefetch in the same container fills the same place.
        let directory =
            shared.cacheDir ?? ProcessInfo.processInfo.environment["HLSCACHE_CACHE_DIR"]
            ?? OriginOptions.defaultCacheDirectory
        let configuration = try shared.originCache(directory: directory, policy: policy, naming: named)
        let logger = Logger(label: "hlscache.prefetch")
        return .cacheDirectory(try CachedOrigin(configuration: configuration, logger: logger))
    }
}
