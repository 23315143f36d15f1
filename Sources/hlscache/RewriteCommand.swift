import ArgumentParser
import Foundation
import HLSPlaylist

/// `hlscache rewrite`: prints a playlist with every URI mapped to the proxy (or custom-scheme) form.
struct RewriteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rewrite",
        abstract: "Rewrite every URI of a playlist so that a player's requests come back to hlscache.",
        discussion: """
            Invalid input prints one line `error: <reason> (line N)` on standard error and exits with status 65.
            """
    )

    @Argument(help: "The playlist file, or - for standard input.")
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

    func run() throws {
        do {
            let playlist = try Playlist(parsing: try PlaylistInput.read(file))
            var imports: [String: String] = [:]
            if let parent {
                let parentPlaylist = try Playlist(parsing: try PlaylistInput.read(parent))
                imports = parentPlaylist.exportedVariables(playlistURL: parentURL ?? url)
            }
            let mapping: URIMapping = customScheme ? .customScheme : .proxy(base: base)
            let output = try playlist.rewritten(playlistURL: url, mapping: mapping, imports: imports)
            FileHandle.standardOutput.write(Data(output))
        } catch let error as PlaylistError {
            FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
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
