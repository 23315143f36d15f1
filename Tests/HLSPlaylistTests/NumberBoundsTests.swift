import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import HLSPlaylist
import ManifestURLs
import Testing

/// Numbers an origin writes are checked once, at parse time: out of range is a typed error with the line, not a
/// trap later.
@Suite("Number bounds", .sharedMachine)
struct NumberBoundsTests {
    static let url = "https://origin.example/live/index.m3u8"

    @Test(
        "numbers out of range are errors naming the tag and the line",
        arguments: [
            ("#EXT-X-TARGETDURATION:9223372036854775808\n#EXTINF:4,\na.ts\n", 2, "EXT-X-TARGETDURATION"),
            ("#EXT-X-TARGETDURATION:1e19\n#EXTINF:4,\na.ts\n", 2, "EXT-X-TARGETDURATION"),
            (
                "#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:9223372036854775806\n#EXTINF:4,\na.ts\n#EXTINF:4,\nb.ts\n",
                3, "EXT-X-MEDIA-SEQUENCE"
            ),
            (
                "#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:99999999999999999999\n#EXTINF:4,\na.ts\n", 3,
                "EXT-X-MEDIA-SEQUENCE"
            ),
            (
                "#EXT-X-TARGETDURATION:4\n#EXT-X-DISCONTINUITY-SEQUENCE:9223372036854775807\n#EXTINF:4,\na.ts\n", 3,
                "EXT-X-DISCONTINUITY-SEQUENCE"
            ),
            (
                "#EXT-X-TARGETDURATION:4\n#EXT-X-BYTERANGE:1@9223372036854775807\n#EXTINF:4,\na.ts\n", 3,
                "EXT-X-BYTERANGE"
            ),
            (
                "#EXT-X-TARGETDURATION:4\n#EXT-X-BYTERANGE:9223372036854775807@0\n#EXTINF:4,\na.ts\n"
                    + "#EXT-X-BYTERANGE:1\n#EXTINF:4,\na.ts\n", 6, "EXT-X-BYTERANGE"
            ),
        ])
    func outOfRangeNumbersAreErrors(body: String, line: Int, tag: String) throws {
        #expect {
            try Playlist(parsing: "#EXTM3U\n" + body)
        } throws: { error in
            guard let error = error as? PlaylistError else { return false }
            return error.label == "number_out_of_range" && error.line == line && error.reason.contains(tag)
        }
    }

    @Test(
        "a value that is not a usable number (no number, a sign, a fraction) stays a malformed tag, ignored",
        arguments: [("NaN", "gobble"), ("-10", "-5"), ("inf", "1.0"), ("", "")])
    func nonNumbersStayMalformed(targetDuration: String, mediaSequence: String) throws {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:\(targetDuration)\n#EXT-X-MEDIA-SEQUENCE:\(mediaSequence)\n"
        guard targetDuration != "inf" else {
            // Infinity is a number, and too large.
            #expect(throws: PlaylistError.self) { try Playlist(parsing: text + "#EXTINF:4,\na.ts\n") }
            return
        }
        let playlist = try Playlist(parsing: text + "#EXTINF:4,\na.ts\n")
        #expect(playlist.targetDuration == nil)
        #expect(playlist.mediaSequence == 0)
    }

    @Test("durations are finite and bounded: EXTINF nan, inf and 1e300 and PART-TARGET 1e308 are ignored")
    func durationsAreBounded() throws {
        let playlist = try Playlist(
            parsing: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PART-INF:PART-TARGET=1e308\n"
                + "#EXTINF:nan,\na.ts\n#EXTINF:inf,\nb.ts\n#EXTINF:1e300,\nc.ts\n#EXTINF:4.5,\nd.ts\n")
        #expect(playlist.partTarget == nil)
        #expect(playlist.segments.map(\.duration) == [0, 0, 0, 4.5])
        #expect(playlist.segments.last?.sequenceNumber == 3)
    }

    @Test("a media sequence that leaves room for its segments is accepted")
    func largeButValidMediaSequence() throws {
        let playlist = try Playlist(
            parsing: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:9223372036854775805\n"
                + "#EXTINF:4,\na.ts\n#EXTINF:4,\nb.ts\n")
        #expect(playlist.segments.map(\.sequenceNumber) == [9_223_372_036_854_775_805, 9_223_372_036_854_775_806])
    }

    @Test("BYTERANGE n@ reads as n, and a zero length is accepted")
    func byteRangeForms() throws {
        #expect(PlaylistByteRange(parsing: "587500@") == PlaylistByteRange(length: 587_500, offset: nil))
        #expect(PlaylistByteRange(parsing: "0@10") == PlaylistByteRange(length: 0, offset: 10))
        #expect(PlaylistByteRange(parsing: "-1@0") == nil)
        #expect(PlaylistByteRange(parsing: "1@9223372036854775807") == nil)
    }

    @Test("segmentTargets gives what references gives for segments, over the fixtures and the corpus")
    func segmentTargetsMatchReferences() async throws {
        var files = try TestPaths.corpusFiles()
        files += try FileManager.default.contentsOfDirectory(
            at: TestPaths.fixtures.appendingPathComponent("playlists"), includingPropertiesForKeys: nil
        ).filter { $0.pathExtension == "m3u8" }
        var compared = 0
        for file in files {
            // Seconds of work in a debug build: let the other suites' in-process origins run in between.
            await Task.yield()
            guard let playlist = try? Playlist(parsing: Data(contentsOf: file)), playlist.kind == .media else {
                continue
            }
            let expected = playlist.references(playlistURL: CorpusTests.playlistURL).compactMap { reference in
                if case .segment = reference.role {
                    return SegmentTarget(url: reference.url, byteRange: reference.byteRange)
                }
                return nil
            }
            #expect(
                playlist.segmentTargets(playlistURL: CorpusTests.playlistURL) == expected, "\(file.lastPathComponent)")
            compared += 1
        }
        #expect(compared > 1000)
    }

    @Test("mapTargets gives the distinct initialization sections references gives, over the fixtures and the corpus")
    func mapTargetsMatchReferences() async throws {
        var files = try TestPaths.corpusFiles()
        files += try FileManager.default.contentsOfDirectory(
            at: TestPaths.fixtures.appendingPathComponent("playlists"), includingPropertiesForKeys: nil
        ).filter { $0.pathExtension == "m3u8" }
        var withMaps = 0
        for file in files {
            await Task.yield()
            guard let playlist = try? Playlist(parsing: Data(contentsOf: file)), playlist.kind == .media else {
                continue
            }
            var expected: [SegmentTarget] = []
            for reference in playlist.references(playlistURL: CorpusTests.playlistURL) {
                guard case .map = reference.role else { continue }
                let target = SegmentTarget(url: reference.url, byteRange: reference.byteRange)
                if !expected.contains(target) { expected.append(target) }
            }
            #expect(
                playlist.mapTargets(playlistURL: CorpusTests.playlistURL) == expected, "\(file.lastPathComponent)")
            if !expected.isEmpty { withMaps += 1 }
        }
        #expect(withMaps > 10)
    }
}

/// Rewriting is bounded while it renders.
@Suite("Rewrite limits", .sharedMachine)
struct RewriteLimitsTests {
    @Test("an EXT-X-DEFINE expansion bomb stops at the first URI past the limit")
    func defineBombStops() throws {
        let value = String(repeating: "a", count: 60_000)
        var text = "#EXTM3U\n#EXT-X-DEFINE:NAME=\"v\",VALUE=\"\(value)\"\n#EXT-X-TARGETDURATION:4\n"
        for index in 0..<300 { text += "#EXTINF:4,\ns" + String(repeating: "{$v}", count: 15) + "\(index).ts\n" }
        let playlist = try Playlist(parsing: text)
        #expect {
            try playlist.rewritten(playlistURL: NumberBoundsTests.url, mapping: .proxy(base: ""))
        } throws: { error in
            (error as? PlaylistError)?.label == "uri_too_long" && (error as? PlaylistError)?.line == 5
        }
        #expect(playlist.segmentTargets(playlistURL: NumberBoundsTests.url).isEmpty)
    }

    @Test("many URIs just under the per-URI limit still stop at the output bound")
    func outputBoundStops() throws {
        let value = String(repeating: "b", count: 4000)
        var text = "#EXTM3U\n#EXT-X-DEFINE:NAME=\"v\",VALUE=\"\(value)\"\n#EXT-X-TARGETDURATION:4\n"
        for index in 0..<2000 { text += "#EXTINF:4,\n{$v}{$v}{$v}\(index).ts\n" }
        let playlist = try Playlist(parsing: text)
        let limits = RewriteLimits()
        let bound = limits.maxOutputBytes(inputBytes: text.utf8.count, uriPlaces: 2000)
        #expect {
            try playlist.rewritten(playlistURL: NumberBoundsTests.url, mapping: .proxy(base: ""), limits: limits)
        } throws: { error in
            (error as? PlaylistError)?.label == "output_too_large"
                && (error as? PlaylistError)?.reason.contains("\(bound) bytes") == true
        }
    }

    @Test("the output bound saturates instead of overflowing")
    func boundSaturates() {
        let limits = RewriteLimits()
        #expect(limits.maxOutputBytes(inputBytes: .max, uriPlaces: .max) == 64 << 20)
        #expect(limits.maxOutputBytes(inputBytes: 1000, uriPlaces: 10) == 4000 + 10 * 1024)
    }

    @Test("withRewritten hands over the same bytes rewritten returns")
    func withRewrittenMatches() throws {
        let playlist = try Playlist(parsing: "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\n")
        let whole = try playlist.rewritten(playlistURL: NumberBoundsTests.url, mapping: .proxy(base: ""))
        let handed = try playlist.withRewritten(playlistURL: NumberBoundsTests.url, mapping: .proxy(base: "")) {
            Array($0)
        }
        #expect(whole == handed)
    }
}
