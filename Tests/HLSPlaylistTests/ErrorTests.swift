import HLSCacheTestTraits
import HLSPlaylist
import ManifestURLs
import Testing

@Suite("Typed errors", .sharedMachine)
struct ErrorTests {
    func error(_ bytes: [UInt8], limits: ParseLimits = .default) -> PlaylistError? {
        do {
            _ = try Playlist(parsing: bytes, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test("no #EXTM3U at the start is an error on the first non-blank line")
    func missingHeader() {
        let failure = error(Array("\n<html>\n#EXTM3U\n".utf8))
        #expect(failure?.isSameKind(as: .missingHeader(line: 0)) == true)
        #expect(failure?.line == 2)
        #expect(error([])?.isSameKind(as: .missingHeader(line: 0)) == true)
    }

    @Test("invalid UTF-8 is reported with its line")
    func notUTF8() {
        let failure = error(Array("#EXTM3U\n#EXTINF:1,\n".utf8) + [0x73, 0xFF, 0xFE, 0x0A])
        #expect(failure?.isSameKind(as: .notUTF8(line: 0)) == true)
        #expect(failure?.line == 3)
    }

    @Test("a line over the limit is reported with its line")
    func lineTooLong() {
        let failure = error(
            Array("#EXTM3U\n#EXTINF:1,\n\(String(repeating: "a", count: 100)).ts\n".utf8),
            limits: ParseLimits(maxLineBytes: 64))
        #expect(failure?.isSameKind(as: .lineTooLong(line: 0, limit: 0)) == true)
        #expect(failure?.line == 3)
    }

    @Test("a body over the limit is refused")
    func bodyTooLarge() {
        let failure = error(Array(repeating: 0x23, count: 2048), limits: ParseLimits(maxBodyBytes: 1024))
        #expect(failure?.isSameKind(as: .bodyTooLarge(bytes: 0, limit: 0)) == true)
        #expect(failure?.description.contains("1024") == true)
    }

    @Test("more lines than the limit are refused, whatever ends them; as many as the limit parse")
    func tooManyLines() {
        let limits = ParseLimits(maxLines: 10)
        for terminator in ["\n", "\r\n", "\r"] {
            let within =
                "#EXTM3U" + terminator
                + String(repeating: "#EXTINF:1," + terminator + "a.ts" + terminator, count: 4) + "b.ts"
            #expect(error(Array(within.utf8), limits: limits) == nil, "\(terminator.debugDescription)")
            let over = within + terminator + "c.ts"
            let failure = error(Array(over.utf8), limits: limits)
            #expect(failure?.isSameKind(as: .tooManyLines(limit: 0)) == true, "\(terminator.debugDescription)")
            #expect(failure?.description.contains("10 lines") == true)
        }
        // Bare line feeds, the most lines per byte: refused at the default limit, from a body far under its limit.
        let feeds = Array("#EXTM3U".utf8) + [UInt8](repeating: 0x0A, count: 2_000_001)
        #expect(error(feeds)?.isSameKind(as: .tooManyLines(limit: 0)) == true)
        #expect(error(Array(feeds.dropLast())) == nil)
    }

    @Test("a malformed attribute list in a URI-bearing tag is an error with its line")
    func malformedURITag() {
        let failure = error(Array("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-KEY:METHOD=AES-128,URI=\"k.key\n".utf8))
        #expect(failure?.isSameKind(as: .malformedAttributeList(line: 0, tag: "", detail: "")) == true)
        #expect(failure?.line == 3)
        #expect(failure?.description.hasSuffix("(line 3)") == true)
        #expect(failure?.label == "malformed_attribute_list")
    }

    @Test("a URI using a variable no EXT-X-DEFINE declares is an error")
    func undefinedVariable() {
        let failure = error(Array("#EXTM3U\n#EXTINF:1,\n{$nope}/a.ts\n".utf8))
        #expect(failure?.isSameKind(as: .undefinedVariable(line: 0, name: "")) == true)
        #expect(failure?.line == 3)
    }

    @Test("a variable whose value cannot be known leaves its URI untouched")
    func unknownImportLeavesURI() throws {
        let text =
            "#EXTM3U\n#EXT-X-DEFINE:IMPORT=\"auth\"\n#EXT-X-DEFINE:QUERYPARAM=\"tok\"\n#EXTINF:1,\na.ts?{$auth}\n#EXTINF:1,\nb.ts?t={$tok}\n"
        let output = try Playlist(parsing: text).rewrittenText(
            playlistURL: "https://h/x.m3u8?tok=9",
            mapping: .proxy(base: ""))
        #expect(output.contains("\na.ts?{$auth}\n"))
        #expect(output.contains("\n/o/https/h/b.ts?t=9\n"))
    }

    @Test("a relative playlist URL is refused")
    func invalidBase() throws {
        let playlist = try Playlist(parsing: "#EXTM3U\n")
        #expect(throws: PlaylistError.self) { try playlist.rewritten(playlistURL: "x.m3u8", mapping: .customScheme) }
    }
}
