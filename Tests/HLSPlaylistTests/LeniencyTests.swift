import HLSCacheTestTraits
import HLSPlaylist
import ManifestURLs
import Testing

/// Each leniency real players have, pinned.
@Suite("Leniency", .sharedMachine)
struct LeniencyTests {
    func rewrite(_ text: String) throws -> String {
        try Playlist(parsing: text).rewrittenText(playlistURL: "https://h/p/x.m3u8", mapping: .proxy(base: ""))
    }

    @Test("EXTINF without a comma is a segment duration")
    func extinfWithoutComma() throws {
        let playlist = try Playlist(parsing: "#EXTM3U\n#EXTINF:5.5\nseg.ts\n")
        #expect(playlist.lines[1].tag == .segmentInfo(SegmentInfo(duration: 5.5, title: "")))
        #expect(try rewrite("#EXTM3U\n#EXTINF:5.5\nseg.ts").hasSuffix("/o/https/h/p/seg.ts\n"))
    }

    @Test("unknown attributes are kept and do not stop the URI from being found")
    func unknownAttributes() throws {
        let text = "#EXTM3U\n#EXT-X-MAP:X-VENDOR=\"a,b\",URI=\"init.mp4\",X-OTHER=7\n"
        #expect(try rewrite(text) == "#EXTM3U\n#EXT-X-MAP:X-VENDOR=\"a,b\",URI=\"/o/https/h/p/init.mp4\",X-OTHER=7\n")
        guard case .map(let map)? = try Playlist(parsing: text).lines[1].tag else {
            Issue.record("EXT-X-MAP not typed")
            return
        }
        #expect(map.attributes.string("X-OTHER") == "7")
    }

    @Test("lowercase hexadecimal IVs are read")
    func lowercaseHex() throws {
        let text = "#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI=\"k.key\",IV=0x0a0b0C\n"
        guard case .key(let key)? = try Playlist(parsing: text).lines[1].tag else {
            Issue.record("EXT-X-KEY not typed")
            return
        }
        #expect(key.iv == [0x0A, 0x0B, 0x0C])
    }

    @Test("spaces after commas and around '=' are accepted and kept")
    func spacesAfterCommas() throws {
        let text = "#EXTM3U\n#EXT-X-KEY:METHOD=AES-128, URI = \"k.key\", IV=0x01\n"
        #expect(try rewrite(text) == "#EXTM3U\n#EXT-X-KEY:METHOD=AES-128, URI = \"/o/https/h/p/k.key\", IV=0x01\n")
    }

    @Test("blanks around a URI line are kept around the rewritten URI")
    func blanksAroundURILines() throws {
        #expect(try rewrite("#EXTM3U\n#EXTINF:1,\n  seg.ts \t\n") == "#EXTM3U\n#EXTINF:1,\n  /o/https/h/p/seg.ts \t\n")
    }

    @Test("an unquoted URI attribute is rewritten in place")
    func unquotedURIAttribute() throws {
        #expect(try rewrite("#EXTM3U\n#EXT-X-MAP:URI=init.mp4\n") == "#EXTM3U\n#EXT-X-MAP:URI=/o/https/h/p/init.mp4\n")
    }

    @Test("blank lines and whitespace before #EXTM3U are accepted")
    func leadingBlankLines() throws {
        let playlist = try Playlist(parsing: "\n  \n#EXTM3U\n#EXTINF:1,\na.ts")
        #expect(playlist.text == "\n  \n#EXTM3U\n#EXTINF:1,\na.ts\n")
    }

    @Test("a UTF-8 BOM, CRLF and bare CR are accepted; output has LF")
    func lineEndings() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("#EXTM3U\r\n#EXTINF:1,\ra.ts\r\n\r\n#EXT-X-ENDLIST".utf8)
        #expect(try Playlist(parsing: bytes).text == "#EXTM3U\n#EXTINF:1,\na.ts\n\n#EXT-X-ENDLIST\n")
    }

    @Test("a TARGETDURATION written as a decimal is rounded up")
    func decimalTargetDuration() throws {
        #expect(try Playlist(parsing: "#EXTM3U\n#EXT-X-TARGETDURATION:5.2\n").targetDuration == 6)
    }

    @Test("a malformed attribute list in a tag without URI is kept verbatim")
    func malformedTagWithoutURIIsKept() throws {
        let text = "#EXTM3U\n#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=\"YES\n"
        let playlist = try Playlist(parsing: text)
        #expect(playlist.text == text)
        if case .malformed(.serverControl, _)? = playlist.lines[1].tag {} else { Issue.record("not malformed") }
    }
}
