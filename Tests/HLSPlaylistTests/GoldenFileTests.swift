import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import HLSPlaylist
import ManifestURLs
import Testing

/// Hand-written input/expected pairs under `Fixtures/playlists/` (see its README).
@Suite("Golden files", .sharedMachine)
struct GoldenFileTests {
    struct Case: CustomStringConvertible, Sendable {
        var name: String
        var playlistURL: String
        var base: String
        var mapping: String
        var parent: String?
        var description: String { name }
    }

    static let directory = TestPaths.fixtures.appendingPathComponent("playlists")

    static let cases: [Case] = {
        guard let table = try? String(contentsOf: directory.appendingPathComponent("cases.tsv"), encoding: .utf8)
        else { return [] }
        return table.split(separator: "\n").dropFirst().map { row in
            let fields = row.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return Case(
                name: fields[0], playlistURL: fields[1], base: fields[2], mapping: fields[3],
                parent: fields.count > 4 && fields[4] != "-" ? fields[4] : nil)
        }
    }()

    @Test("there are golden cases")
    func goldenCasesExist() {
        #expect(Self.cases.count >= 8)
    }

    @Test("the rewritten playlist equals the hand-written expected file", arguments: cases)
    func rewriteMatchesGoldenFile(_ golden: Case) throws {
        let input = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent(golden.name + ".m3u8")))
        let expected = try String(
            contentsOf: Self.directory.appendingPathComponent(golden.name + ".expected.m3u8"), encoding: .utf8)
        var imports: [String: String] = [:]
        if let parent = golden.parent {
            let parentPlaylist = try Playlist(
                parsing: [UInt8](Data(contentsOf: Self.directory.appendingPathComponent(parent))))
            imports = parentPlaylist.exportedVariables(playlistURL: golden.playlistURL)
        }
        let mapping: URIMapping = golden.mapping == "custom" ? .customScheme : .proxy(base: golden.base)
        let output = try Playlist(parsing: input).rewrittenText(
            playlistURL: golden.playlistURL, mapping: mapping, imports: imports)
        let outputLines = output.split(separator: "\n", omittingEmptySubsequences: false)
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        for (number, (got, want)) in zip(outputLines, expectedLines).enumerated() where got != want {
            Issue.record("\(golden.name) line \(number + 1):\n  got  \(got)\n  want \(want)")
        }
        #expect(output == expected)
    }
}
