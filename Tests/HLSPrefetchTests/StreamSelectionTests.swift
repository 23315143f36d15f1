import Foundation
import HLSCacheTestTraits
import HLSPlaylist
import Testing

@testable import HLSPrefetch

@Suite("Choosing variants and renditions", .sharedMachine)
struct StreamSelectionTests {
    static let master = """
        #EXTM3U
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="en",DEFAULT=YES,URI="audio/en.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="fr",DEFAULT=NO,URI="audio/fr.m3u8"
        #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="en",URI="subs/en.m3u8"
        #EXT-X-SESSION-DATA:DATA-ID="com.example",URI="data.json"
        #EXT-X-STREAM-INF:BANDWIDTH=2000000,AUDIO="aud",SUBTITLES="subs"
        hi/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=800000,AUDIO="aud",SUBTITLES="subs"
        mid/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=300000,AUDIO="aud",SUBTITLES="subs"
        lo/index.m3u8
        #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,URI="iframes.m3u8"

        """

    func choose(_ configure: (inout PrefetchOptions) -> Void) throws -> (StreamSelection, String) {
        let playlist = try Playlist(parsing: Self.master)
        var options = PrefetchOptions()
        configure(&options)
        let url = "http://h/master.m3u8"
        let selection = StreamSelection(playlist, references: playlist.references(playlistURL: url), options: options)
        return (selection, try OutputPlaylists.multivariant(playlist, url: url, selection: selection))
    }

    @Test("all: every variant and rendition, no I-frames, no session data")
    func all() throws {
        let (selection, written) = try choose { _ in }
        #expect(
            selection.mediaPlaylists == [
                "http://h/audio/en.m3u8", "http://h/audio/fr.m3u8", "http://h/subs/en.m3u8", "http://h/hi/index.m3u8",
                "http://h/mid/index.m3u8", "http://h/lo/index.m3u8",
            ])
        #expect(!written.contains("I-FRAME") && !written.contains("SESSION-DATA") && !written.contains("http://"))
    }

    @Test("best, worst and a bandwidth limit pick by BANDWIDTH; the written playlist keeps only those")
    func variantChoice() throws {
        let (best, bestText) = try choose { $0.variants = .best }
        #expect(best.mediaPlaylists.filter { $0.contains("index") } == ["http://h/hi/index.m3u8"])
        #expect(bestText.components(separatedBy: "#EXT-X-STREAM-INF").count == 2)
        let (worst, _) = try choose { $0.variants = .worst }
        #expect(worst.mediaPlaylists.filter { $0.contains("index") } == ["http://h/lo/index.m3u8"])
        let (limited, _) = try choose { $0.variants = PrefetchOptions.VariantSelection(parsing: "1M")! }
        #expect(
            limited.mediaPlaylists.filter { $0.contains("index") } == [
                "http://h/mid/index.m3u8", "http://h/lo/index.m3u8",
            ])
        let (tooLow, _) = try choose { $0.variants = .maxBandwidth(1) }
        #expect(tooLow.mediaPlaylists.filter { $0.contains("index") } == ["http://h/lo/index.m3u8"])
    }

    @Test("--audio default keeps the DEFAULT=YES rendition; --subtitles none drops them and the SUBTITLES attribute")
    func renditionChoice() throws {
        let (selection, written) = try choose {
            $0.audio = .default
            $0.subtitles = .none
            $0.iFrames = true
        }
        #expect(selection.mediaPlaylists.contains("http://h/audio/en.m3u8"))
        #expect(!selection.mediaPlaylists.contains("http://h/audio/fr.m3u8"))
        #expect(!selection.mediaPlaylists.contains("http://h/subs/en.m3u8"))
        #expect(selection.mediaPlaylists.contains("http://h/iframes.m3u8"))
        #expect(!written.contains("SUBTITLES") && !written.contains("NAME=\"fr\""))
        #expect(written.contains("I-FRAME-STREAM-INF"))
    }
}
