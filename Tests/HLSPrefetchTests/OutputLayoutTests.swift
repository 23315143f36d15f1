import ByteRanges
import HLSCacheTestTraits
import HLSPlaylist
import Testing

@testable import HLSPrefetch

@Suite("Output folder names", .sharedMachine)
struct OutputLayoutTests {
    @Test(
        "names keep only [A-Za-z0-9._-], never start with a dot, and never leave media/",
        arguments: [
            "http://h/a/..%2F..%2Fetc%2Fpasswd", "http://h/.hidden", "http://h/a/b/%00nul.ts", "http://h/",
            "http://h", "http://h/a/seg 1 (final).ts?x=../../y", "http://h/a/%E2%9C%93.ts", "http://h/../../x.ts",
            "http://h/a/..", "http://h/a/" + String(repeating: "x", count: 300) + ".ts",
        ])
    func hostileURLsBecomeSafeNames(url: String) {
        let path = OutputLayout.path(of: PrefetchObject(url: url, range: nil, kind: .segment))
        #expect(path.hasPrefix("media/"))
        let name = path.dropFirst("media/".count)
        #expect(name.wholeMatch(of: /[A-Za-z0-9_-][A-Za-z0-9._-]{0,80}/) != nil, "\(path)")
        #expect(!name.contains("/"))
    }

    @Test("the same URL always gets the same name; another range or URL gets another")
    func namesAreStableAndDistinct() {
        let whole = PrefetchObject(url: "http://h/v/media.ts", range: nil, kind: .segment)
        let first = PrefetchObject(url: "http://h/v/media.ts", range: ByteRange(offset: 0, length: 10), kind: .segment)
        let second = PrefetchObject(
            url: "http://h/v/media.ts", range: ByteRange(offset: 10, length: 10), kind: .segment)
        let other = PrefetchObject(url: "http://h/w/media.ts", range: nil, kind: .segment)
        let paths = [whole, first, second, other].map(OutputLayout.path(of:))
        #expect(Set(paths).count == 4)
        #expect(OutputLayout.path(of: whole) == OutputLayout.path(of: whole))
        #expect(paths[0].hasSuffix(".ts") && paths[0].hasPrefix("media/media_"))
    }

    @Test("media playlists are named .m3u8 beside the entry, never index.m3u8 itself")
    func playlistNames() {
        let name = OutputLayout.path(ofPlaylist: "http://h/hi/index.m3u8")
        #expect(name.hasPrefix("index_") && name.hasSuffix(".m3u8"))
        #expect(name != OutputLayout.entryPlaylist)
        #expect(OutputLayout.path(ofPlaylist: "http://h/hi/playlist.php?id=3").hasSuffix(".m3u8"))
    }
}
