import HLSCacheTestTraits
import HLSPlaylist
import ManifestURLs
import Testing

/// Reference resolution through the rewriter, checked against RFC 3986 section 5.4's own examples.
@Suite("RFC 3986 reference resolution", .sharedMachine)
struct URLResolutionTests {
    static let base = "http://a/b/c/d;p?q"

    /// RFC 3986 section 5.4.1 and 5.4.2 (those whose target is an http URL).
    static let examples: [(String, String)] = [
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
        ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q#s"),
        ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"), (";x", "http://a/b/c/;x"),
        ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"), (".", "http://a/b/c/"),
        ("./", "http://a/b/c/"), ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"),
        ("../..", "http://a/"), ("../../", "http://a/"), ("../../g", "http://a/g"),
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"),
        ("/../g", "http://a/g"), ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."),
        ("..g", "http://a/b/c/..g"), ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"),
        ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
        ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"),
        ("g#s/./x", "http://a/b/c/g#s/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"), ("http:g", "http://a/b/c/g"),
        ("https://other.example/x/../y.ts", "https://other.example/y.ts"),
    ]

    @Test("relative references resolve as RFC 3986 section 5.4 says")
    func resolvesRFCExamples() throws {
        let text = "#EXTM3U\n" + Self.examples.map { "#EXT-X-MAP:URI=\"\($0.0)\"" }.joined(separator: "\n")
        let resolved = try Playlist(parsing: text).resolvedURIs(playlistURL: Self.base)
        #expect(resolved.count == Self.examples.count)
        for (example, target) in zip(Self.examples, resolved) {
            #expect(target == example.1, "\(example.0) resolved to \(target ?? "nil")")
        }
    }

    /// The reference's parts are found eight bytes at a time: every boundary lands at every offset of a word.
    @Test("authority, query and fragment end where they do at every length of the parts before them")
    func partsAreFoundAtEveryOffset() throws {
        var references: [String] = []
        var targets: [String] = []
        for length in 1...20 {
            let name = String(repeating: "n", count: length)
            references += ["\(name).ts", "\(name)?q=\(name)", "\(name)#f", "\(name)?q#f/?", "\(name)#f?q"]
            targets += [
                "http://a/b/c/\(name).ts", "http://a/b/c/\(name)?q=\(name)", "http://a/b/c/\(name)#f",
                "http://a/b/c/\(name)?q#f/?", "http://a/b/c/\(name)#f?q",
            ]
            references += ["//\(name)", "//\(name)/p", "//\(name)?q", "//\(name)#f", "https://\(name):8/\(name)?#"]
            targets += [
                "http://\(name)", "http://\(name)/p", "http://\(name)?q", "http://\(name)#f",
                "https://\(name):8/\(name)?#",
            ]
        }
        let text = "#EXTM3U\n" + references.map { "#EXT-X-MAP:URI=\"\($0)\"" }.joined(separator: "\n")
        let resolved = try Playlist(parsing: text).resolvedURIs(playlistURL: Self.base)
        #expect(resolved == targets.map { Optional($0) })
    }

    @Test("the query of a URI is kept byte for byte and the playlist's query is not inherited")
    func keepsQueryBytes() throws {
        let text = "#EXTM3U\n#EXTINF:1,\nseg.ts?a=%2F&b=+&c=é&&d\n"
        let output = try Playlist(parsing: text).rewrittenText(
            playlistURL: "https://h/p/x.m3u8?token=1", mapping: .proxy(base: ""))
        #expect(output.hasSuffix("\n/o/https/h/p/seg.ts?a=%2F&b=+&c=é&&d\n"))
    }

    @Test("skd:, data: and other schemes are left untouched")
    func otherSchemesAreUntouched() throws {
        let text = """
            #EXTM3U
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://key-id",KEYFORMAT="com.apple.streamingkeydelivery"
            #EXT-X-KEY:METHOD=AES-128,URI="data:text/plain;base64,AAECAw=="
            #EXTINF:1,
            ftp://h/seg.ts
            """
        let playlist = try Playlist(parsing: text)
        #expect(try playlist.rewrittenText(playlistURL: "https://h/x.m3u8", mapping: .proxy(base: "")) == text + "\n")
    }
}
