import HLSCacheTestTraits
import HLSPlaylist
import Testing

/// The parser looks at the bytes eight at a time before it reads a line (LFs, CRs, bytes past ASCII, `{`): each of
/// these is found at every offset of a word, and at the unaligned tail.
@Suite("Byte survey", .sharedMachine)
struct ByteSurveyTests {
    /// `#EXTM3U`, then a comment padded to put what follows at `offset` of a word (the header and `#` take 9 bytes).
    static func prefix(_ offset: Int) -> String { "#EXTM3U\n#" + String(repeating: "x", count: offset) }

    @Test("lines end at their LF, CRLF or CR wherever it falls, and a last line needs no terminator")
    func linesEndAtEveryOffset() throws {
        for offset in 0..<17 {
            for terminator in ["\n", "\r\n", "\r"] {
                let body = [
                    "#EXTM3U", "#" + String(repeating: "x", count: offset), "#EXTINF:1,", "seg\(offset).ts", "", "tail",
                ]
                let text = body.joined(separator: terminator)
                let lines = try Playlist(parsing: text).lines.map(\.text)
                #expect(lines == body, "offset \(offset), terminator \(Array(terminator.utf8))")
            }
        }
    }

    @Test("a byte that is not UTF-8 is refused on its line wherever it falls; valid UTF-8 is kept")
    func invalidUTF8AtEveryOffset() throws {
        for offset in 0..<17 {
            let bytes = Array((Self.prefix(offset) + "\n#EXTINF:1,\n").utf8)
            var invalid = bytes
            invalid.insert(0xFF, at: 9 + offset)
            #expect(throws: PlaylistError.notUTF8(line: 2)) { try Playlist(parsing: invalid) }
            let accented = Self.prefix(offset) + "é\n#EXTINF:1,\nsegé.ts\n"
            #expect(try Playlist(parsing: accented).lines[1].text == "#" + String(repeating: "x", count: offset) + "é")
        }
    }

    @Test("a variable reference is seen wherever it falls")
    func variableReferenceAtEveryOffset() throws {
        for offset in 0..<17 {
            let text = Self.prefix(offset) + "\n#EXTINF:1,\n" + String(repeating: "a", count: offset) + "{$v}.ts"
            #expect(throws: PlaylistError.undefinedVariable(line: 4, name: "v")) { try Playlist(parsing: text) }
            let defined =
                "#EXTM3U\n#EXT-X-DEFINE:NAME=\"v\",VALUE=\"seg\"\n#EXTINF:1,\n"
                + String(repeating: "a", count: offset) + "{$v}.ts\n"
            let resolved = try Playlist(parsing: defined).resolvedURIs(playlistURL: "https://h/p/x.m3u8")
            #expect(resolved == ["https://h/p/" + String(repeating: "a", count: offset) + "seg.ts"])
        }
    }
}
