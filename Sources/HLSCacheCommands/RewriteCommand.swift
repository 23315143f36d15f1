import ArgumentParser
import DASHManifest
import Foundation
import HLSPlaylist
import ManifestURLs

/// `hlscache rewrite`: prints a playlist or an MPD with every URL mapped to the proxy (or custom-scheme) form.
struct RewriteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rewrite",
        abstract:
            "Rewrite every URL of an HLS playlist or a DASH MPD so that a player's requests come back to hlscache.",
        discussion: """
            The format is detected (an <MPD> root is DASH, anything else HLS) unless --format says.
            --view applies a manifest view as the server does (filters and a window; a delay or a start needs the \
            server's live history).
            Invalid input, or a view that leaves nothing to play, prints one line `error: <reason> (line N)` on \
            standard error and exits with status 65.
            """
    )

    /// The manifest formats.
    enum Format: String, ExpressibleByArgument {
        case hls, dash
    }

    @Argument(help: "The playlist or MPD file, or - for standard input.")
    var file: String = "-"

    @Option(name: .long, help: "The URL the playlist was fetched from (relative URIs resolve against it).")
    var url: String

    @Option(name: .long, help: "The front's base URL, e.g. http://127.0.0.1:8080; empty gives absolute paths.")
    var base: String = ""

    @Flag(name: .long, help: "Map to hlscache-http(s):// URLs (AVPlayer resource loaders) instead of proxy URLs.")
    var customScheme = false

    @Option(name: .long, help: "The parent multivariant playlist, for EXT-X-DEFINE:IMPORT.")
    var parent: String?

    @Option(name: .long, help: "The parent multivariant playlist's URL (defaults to --url).")
    var parentURL: String?

    @Option(name: .long, help: "hls or dash (default: detected).")
    var format: Format?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A manifest view, as hlscache.* query parameters (filters and hlscache.window).",
            valueName: "hlscache.name=value&..."))
    var view: String?

    /// The view `--view` names.
    func manifestView() throws -> ManifestView {
        guard let view else { return ManifestView() }
        return try ViewOption.parse(
            view, option: "--view", timeline: "a delay, start or end needs the server's live history")
    }

    func run() throws {
        let view = try manifestView()
        let input = try PlaylistInput.read(file)
        let plainMapping: URIMapping = customScheme ? .customScheme : .proxy(base: base)
        if (format ?? (MPDManifest.looksLikeMPD(Array(input.prefix(4096))) ? .dash : .hls)) == .dash {
            do {
                FileHandle.standardOutput.write(
                    Data(try MPDManifest.rewrite(input, url: url, mapping: plainMapping, view: view).bytes))
            } catch {
                FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
                throw ExitCode(65)
            }
            return
        }
        do {
            let playlist = try Playlist(parsing: input).viewed(by: view)
            var imports: [String: String] = [:]
            if let parent {
                let parentPlaylist = try Playlist(parsing: try PlaylistInput.read(parent))
                imports = parentPlaylist.exportedVariables(playlistURL: parentURL ?? url)
            }
            // A multivariant playlist's URIs carry the view to its media playlists, as the server's do.
            let mapping =
                playlist.kind == .multivariant && !view.isEmpty
                ? .custom { plainMapping.map($0).map(view.carried(by:)) } : plainMapping
            let output = try playlist.rewritten(playlistURL: url, mapping: mapping, imports: imports)
            FileHandle.standardOutput.write(Data(output))
        } catch let error as PlaylistError {
            FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
            throw ExitCode(65)
        } catch let error as ManifestViewError {
            FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
            throw ExitCode(65)
        }
    }
}

/// Reads a playlist from a file or standard input.
enum PlaylistInput {
    static func read(_ path: String) throws -> [UInt8] {
        do {
            if path == "-" { return [UInt8](FileHandle.standardInput.readDataToEndOfFile()) }
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw ValidationError("cannot read \(path): \(error.localizedDescription)")
        }
    }
}
