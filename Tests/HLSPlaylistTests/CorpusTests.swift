import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import HLSPlaylist
import ManifestURLs
import Testing

/// Runs the parser and rewriter over every playlist of `../shared/corpus`.
@Suite("Corpus", .sharedMachine)
struct CorpusTests {
    static let playlistURL = "https://origin.example.com/path/to/stream/playlist.m3u8?token=abc&aParam=1"
    static let marker = "MAPPED:"

    struct Outcome {
        var parsed = 0
        var failed: [String: Int] = [:]
        var places = 0
        var mapped = 0
    }

    @Test("every corpus playlist parses or fails with a typed error, and round-trips its lines")
    func everyPlaylistParsesOrFailsCleanlyAndRoundTrips() async throws {
        let files = try TestPaths.corpusFiles()
        #expect(files.count >= 2000, "the corpus at ../shared/corpus was not found or is incomplete")
        var outcome = Outcome()
        for file in files {
            // Seconds of work in a debug build: let the other suites' in-process origins run in between.
            await Task.yield()
            let bytes = try [UInt8](Data(contentsOf: file))
            let playlist: Playlist
            do {
                playlist = try Playlist(parsing: bytes)
            } catch {
                outcome.failed[error.label, default: 0] += 1
                #expect(error.line >= 0)
                continue
            }
            outcome.parsed += 1
            let expected = IndependentURIExtractor.lines(bytes).map { $0 + "\n" }.joined()
            #expect(playlist.text == expected, "\(file.lastPathComponent) does not serialize to its lines")
            #expect(playlist.lines.count == IndependentURIExtractor.lines(bytes).count)
        }
        print("corpus: \(files.count) playlists, \(outcome.parsed) parsed, failed by kind: \(outcome.failed)")
        #expect(outcome.parsed > 1900)
    }

    @Test("every URI place of every corpus playlist is mapped exactly once and nothing else changes")
    func everyURIPlaceIsMappedExactlyOnce() async throws {
        let mapping = URIMapping.custom { Self.marker + $0 }
        var outcome = Outcome()
        for file in try TestPaths.corpusFiles() {
            await Task.yield()
            let bytes = try [UInt8](Data(contentsOf: file))
            guard let playlist = try? Playlist(parsing: bytes) else { continue }
            let output = try playlist.rewrittenText(playlistURL: Self.playlistURL, mapping: mapping)
            let inputLines = IndependentURIExtractor.lines(bytes)
            let outputLines = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(
                String.init)
            try #require(inputLines.count == outputLines.count, "\(file.lastPathComponent): line count changed")
            for (input, rewritten) in zip(inputLines, outputLines) {
                let places = IndependentURIExtractor.places(in: input)
                outcome.places += places.count
                if places.isEmpty {
                    #expect(rewritten == input, "\(file.lastPathComponent): a line without URIs changed")
                    continue
                }
                outcome.mapped += Self.check(input: input, output: rewritten, places: places, file: file)
            }
        }
        print("corpus rewrite: \(outcome.places) URI places, \(outcome.mapped) mapped")
        #expect(outcome.mapped > 10_000)
    }

    @Test("the built-in mappings, which resolve straight into the output, write what their pure functions make")
    func builtInMappingsEqualTheirPureFunctions() async throws {
        let base = "http://127.0.0.1:8080/"
        let pairs: [(builtIn: URIMapping, function: URIMapping)] = [
            (.proxy(base: base), .custom { ProxyURL.make(origin: $0, base: base) }),
            (.customScheme, .custom { CustomSchemeURL.make(origin: $0) }),
        ]
        var compared = 0
        for file in try TestPaths.corpusFiles() {
            await Task.yield()
            guard let playlist = try? Playlist(parsing: [UInt8](Data(contentsOf: file))) else { continue }
            for pair in pairs {
                let builtIn = try playlist.rewritten(playlistURL: Self.playlistURL, mapping: pair.builtIn)
                let function = try playlist.rewritten(playlistURL: Self.playlistURL, mapping: pair.function)
                #expect(builtIn == function, "\(file.lastPathComponent): the built-in mapping differs")
                compared += 1
            }
        }
        #expect(compared > 3800)
    }

    /// Checks one line: each place is either mapped once (`MAPPED:` + an http(s) URL) or left as written, and
    /// every character outside the places is unchanged.
    /// - Returns: how many places were mapped.
    static func check(input: String, output: String, places: [IndependentURIExtractor.Place], file: URL) -> Int {
        let line = Array(input)
        var rest = Array(output)[...]
        var cursor = 0
        var mapped = 0
        let name = file.lastPathComponent
        let ordered = places.sorted { $0.prefix.count < $1.prefix.count }
        for (number, place) in ordered.enumerated() {
            let start = place.prefix.count
            let end = start + place.uri.count
            let literal = line[cursor..<start]
            guard rest.starts(with: literal) else {
                Issue.record("\(name): text before a URI changed: \(input) → \(output)")
                return mapped
            }
            rest = rest.dropFirst(literal.count)
            cursor = end
            let mustStay = IndependentURIExtractor.hasOtherScheme(place.uri)
            if !mustStay, rest.starts(with: marker) {
                rest = rest.dropFirst(marker.count)
                #expect(!rest.starts(with: marker), "\(name): a URI was mapped twice")
                #expect(rest.starts(with: "http://") || rest.starts(with: "https://"), "\(name): \(output)")
                let quoted = start > 0 && line[start - 1] == "\""
                if quoted {
                    guard let close = rest.firstIndex(of: "\"") else {
                        Issue.record("\(name): closing quote lost: \(output)")
                        return mapped
                    }
                    rest = rest[close...]
                } else if number == ordered.count - 1 {
                    let tail = line[end...]
                    guard rest.count >= tail.count else {
                        Issue.record("\(name): text after a URI lost: \(output)")
                        return mapped
                    }
                    rest = rest.suffix(tail.count)
                } else {
                    rest = rest[(rest.firstIndex(of: ",") ?? rest.endIndex)...]
                }
                mapped += 1
            } else {
                #expect(mustStay || place.uri.contains("{$"), "\(name): URI \(place.uri) was not mapped")
                guard rest.starts(with: place.uri) else {
                    Issue.record("\(name): untouched URI \(place.uri) changed: \(output)")
                    return mapped
                }
                rest = rest.dropFirst(place.uri.count)
            }
        }
        #expect(Array(rest) == Array(line[cursor...]), "\(name): text after a URI changed: \(input) → \(output)")
        return mapped
    }
}
