import Foundation
import HLSCacheTestTraits
import HLSPlaylist
import ManifestURLs
import Testing

/// Manifest views (`hlscache.*`): the parameters read and checked, written in one spelling, and applied to
/// playlists (filters on multivariant playlists, windows on live media playlists).
@Suite("Manifest views", .sharedMachine)
struct ManifestViewTests {
    @Test("every parameter reads, and writes back in one spelling whatever the order and the suffixes")
    func parametersRoundTrip() throws {
        let view = try ManifestView(
            query: "hlscache.window=30&x=1&hlscache.codecs=MP4A,avc1&hlscache.bandwidth=500k-3.5M&hlscache.height=-720"
                + "&hlscache.audio=en,fr&hlscache.subtitles=none&hlscache.iframes=none&hlscache.delay=20"
                + "&hlscache.start=2026-11-28T18:00:00Z&hlscache.end=1796500000")
        #expect(view.bandwidth == .init(minimum: 500_000, maximum: 3_500_000))
        #expect(view.height == .init(minimum: nil, maximum: 720))
        #expect(view.codecs == [["avc1", "mp4a"]])
        #expect(view.subtitles == [[]])
        #expect(view.start == 1_795_888_800)
        #expect(
            view.canonicalQuery
                == "hlscache.audio=en,fr&hlscache.bandwidth=500000-3500000&hlscache.codecs=avc1,mp4a"
                + "&hlscache.delay=20&hlscache.end=1796500000&hlscache.height=-720&hlscache.iframes=none"
                + "&hlscache.start=1795888800&hlscache.subtitles=none&hlscache.window=30")
        #expect(try ManifestView(query: view.canonicalQuery) == view)
        // Found by the view fuzzer: each canonical spelling reads back the same view (no exponent, no date before
        // 1970, whole seconds).
        for query in [
            "hlscache.delay=0.00001", "hlscache.window=1.4&hlscache.start=1795888800.25", "hlscache.subtitles=nOne",
        ] {
            let small = try ManifestView(query: query)
            #expect(try ManifestView(query: small.canonicalQuery) == small, "\(small.canonicalQuery)")
        }
        #expect(throws: ManifestViewError.self) { try ManifestView(query: "hlscache.start=1013-11-28T18:00:00.5Z") }
        // Seconds are whole: a flood of views a fraction apart is one view.
        #expect(
            try ManifestView(query: "hlscache.window=30.4").canonicalQuery
                == ManifestView(query: "hlscache.window=29.6").canonicalQuery)
        #expect(throws: ManifestViewError.self) { try ManifestView(query: "hlscache.window=0.4") }
        #expect(throws: ManifestViewError.self) { try ManifestView(query: "hlscache.subtitles=none,en") }
        #expect(throws: ManifestViewError.self) { try ManifestView(parameters: "hlscache.window=5&token=abc") }
        #expect(try ManifestView(query: "a=1&b=2").isEmpty)
    }

    @Test(
        "a malformed value, a repeated or unknown name is an error naming the parameter",
        arguments: [
            ("hlscache.bandwith=1M", "hlscache.bandwith"), ("hlscache.bandwidth=3M", "hlscache.bandwidth"),
            ("hlscache.bandwidth=-", "hlscache.bandwidth"), ("hlscache.bandwidth=5M-1M", "hlscache.bandwidth"),
            ("hlscache.bandwidth=99999999999999999999-", "hlscache.bandwidth"),
            ("hlscache.bandwidth=1e9-", "hlscache.bandwidth"), ("hlscache.height=1k-", "hlscache.height"),
            ("hlscache.window=0", "hlscache.window"), ("hlscache.window=-5", "hlscache.window"),
            ("hlscache.window=nan", "hlscache.window"), ("hlscache.delay=1e400", "hlscache.delay"),
            ("hlscache.window=1&hlscache.window=2", "hlscache.window"), ("hlscache.iframes=only", "hlscache.iframes"),
            ("hlscache.codecs=", "hlscache.codecs"), ("hlscache.codecs=avc1,,mp4a", "hlscache.codecs"),
            ("hlscache.audio=en%00", "hlscache.audio"), ("hlscache.start=yesterday", "hlscache.start"),
            ("hlscache.start=20&hlscache.end=10", "hlscache.end"), ("hlscache.audio=%ZZ", "hlscache.audio"),
        ])
    func malformedParametersAreRefused(query: String, named: String) {
        #expect {
            try ManifestView(query: query)
        } throws: { error in
            (error as? ManifestViewError).map { $0.isMalformedRequest && $0.message.contains(named) } ?? false
        }
    }

    @Test("a request's view narrows the server's, never widens it")
    func viewsNarrow() throws {
        let server = try ManifestView(query: "hlscache.bandwidth=-3M&hlscache.codecs=avc1,mp4a&hlscache.window=60")
        let request = try ManifestView(query: "hlscache.bandwidth=1M-8M&hlscache.codecs=hvc1&hlscache.window=600")
        let both = server.narrowed(by: request)
        #expect(both.bandwidth == .init(minimum: 1_000_000, maximum: 3_000_000))
        #expect(both.windowSeconds == 60)
        #expect(!both.keepsCodecs("hvc1.1.6.L93,mp4a.40.2") && !both.keepsCodecs("avc1.64001f"))
        #expect(server.keepsCodecs("avc1.64001f,mp4a.40.2") && server.keepsCodecs(nil))
    }

    static let multivariant = """
        #EXTM3U
        #EXT-X-INDEPENDENT-SEGMENTS
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",LANGUAGE="en-GB",URI="audio/en.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="French",LANGUAGE="fr",URI="audio/fr.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="ec3",NAME="French",LANGUAGE="fr",URI="audio/fr-ec3.m3u8"
        #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="German",LANGUAGE="de",URI="subs/de.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",AUDIO="aac",SUBTITLES="subs"
        low/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=5000000,RESOLUTION=1920x1080,CODECS="avc1.640028,mp4a.40.2",AUDIO="aac",SUBTITLES="subs"
        high/index.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=2500000,RESOLUTION=1280x720,CODECS="hvc1.1.6.L93,ec-3",AUDIO="ec3"
        hevc/index.m3u8
        #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=90000,RESOLUTION=640x360,CODECS="avc1.4d401e",URI="low/iframes.m3u8"
        #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=400000,RESOLUTION=1920x1080,CODECS="avc1.640028",URI="high/iframes.m3u8"

        """

    static func uris(_ playlist: Playlist) -> [String] { playlist.uriPlaceTexts }

    @Test("variants, renditions and I-frame playlists are filtered consistently")
    func multivariantFilters() throws {
        let playlist = try Playlist(parsing: Self.multivariant)
        func shown(_ query: String) throws -> [String] {
            try Self.uris(playlist.viewed(by: ManifestView(query: query)))
        }
        // An I-frame playlist by its own BANDWIDTH (the 1080p one's is 400 kbit/s).
        let capped = try shown("hlscache.bandwidth=-3M")
        #expect(
            capped
                == [
                    "audio/en.m3u8", "audio/fr.m3u8", "audio/fr-ec3.m3u8", "subs/de.m3u8", "low/index.m3u8",
                    "hevc/index.m3u8", "low/iframes.m3u8", "high/iframes.m3u8",
                ], "\(capped)")
        #expect(try shown("hlscache.height=720-").contains("high/iframes.m3u8"))
        #expect(!(try shown("hlscache.height=720-").contains("low/index.m3u8")))
        #expect(
            try shown("hlscache.codecs=avc1,mp4a").filter { $0.hasSuffix("index.m3u8") } == [
                "low/index.m3u8", "high/index.m3u8",
            ])
        // English only: the ec3 group loses its one rendition, and the HEVC variant that uses it goes too.
        #expect(
            try shown("hlscache.audio=en")
                == [
                    "audio/en.m3u8", "subs/de.m3u8", "low/index.m3u8", "high/index.m3u8", "low/iframes.m3u8",
                    "high/iframes.m3u8",
                ])
        #expect(try shown("hlscache.iframes=none").allSatisfy { !$0.contains("iframes") })
        // No subtitles: the renditions go, and the variants no longer name their group.
        let unsubtitled = try playlist.viewed(by: ManifestView(query: "hlscache.subtitles=none"))
        #expect(!Self.uris(unsubtitled).contains("subs/de.m3u8"))
        #expect(
            unsubtitled.variantStreams.count == 3
                && unsubtitled.variantStreams.allSatisfy { $0.streamInf.subtitles == nil })
        #expect(unsubtitled.variantStreams[0].streamInf.audio == "aac")
        #expect(unsubtitled.variantStreams[0].streamInf.codecs == "avc1.4d401e,mp4a.40.2")
    }

    @Test("a view that leaves no variant is an error, not an empty playlist")
    func emptyViewIsAnError() throws {
        let playlist = try Playlist(parsing: Self.multivariant)
        #expect {
            try playlist.viewed(by: ManifestView(query: "hlscache.bandwidth=10M-"))
        } throws: { error in
            (error as? ManifestViewError)?.isUnprocessable == true
        }
    }

    /// A live playlist of 20 segments of 2 s, with a discontinuity, a key rotation, a map, dates and byte ranges.
    static let live: String = {
        var lines = [
            "#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:2", "#EXT-X-MEDIA-SEQUENCE:100",
            "#EXT-X-DISCONTINUITY-SEQUENCE:3", "#EXT-X-MAP:URI=\"init.mp4\"",
            "#EXT-X-KEY:METHOD=AES-128,URI=\"k1.key\"", "#EXT-X-PROGRAM-DATE-TIME:2026-11-28T18:00:00.000Z",
        ]
        for number in 0..<20 {
            if number == 5 { lines.append("#EXT-X-DISCONTINUITY") }
            if number == 8 { lines.append("#EXT-X-KEY:METHOD=AES-128,URI=\"k2.key\"") }
            lines.append("#EXTINF:2.0,")
            lines.append("#EXT-X-BYTERANGE:1000" + (number % 10 == 0 ? "@0" : ""))
            lines.append("media\(number / 10).mp4")
        }
        return lines.joined(separator: "\n") + "\n"
    }()

    @Test("a window keeps the newest segments with the sequence numbers, key, map, date and byte range in force")
    func liveWindow() throws {
        let playlist = try Playlist(parsing: Self.live)
        let windowed = try playlist.viewed(by: ManifestView(query: "hlscache.window=10"))
        let segments = windowed.segments
        let original = playlist.segments
        #expect(segments.count == 5)
        #expect(windowed.mediaSequence == 115)
        for (kept, source) in zip(segments, original.suffix(5)) {
            #expect(kept.sequenceNumber == source.sequenceNumber && kept.byteRange == source.byteRange)
            #expect(kept.key?.uri == "k2.key" && kept.map?.uri == "init.mp4" && kept.uri == source.uri)
        }
        #expect(windowed.tags.contains { $0.tag == .discontinuitySequence(4) })
        #expect(windowed.tags.contains { $0.tag == .programDateTime("2026-11-28T18:00:30.000Z") })
        #expect(windowed.targetDuration == 2 && windowed.isLive)
        // Never shorter than three target durations; a playlist shorter than the window, or ended, is as it was.
        #expect(try playlist.viewed(by: ManifestView(query: "hlscache.window=1")).segments.count == 3)
        #expect(try playlist.viewed(by: ManifestView(query: "hlscache.window=600")).segments == original)
        let ended = try Playlist(parsing: Self.live + "#EXT-X-ENDLIST\n")
        #expect(try ended.viewed(by: ManifestView(query: "hlscache.window=10")).segments.count == 20)
    }
}
