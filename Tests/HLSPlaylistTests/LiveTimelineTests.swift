import Foundation
import HLSCacheTestTraits
import HLSPlaylist
import ManifestURLs
import Testing

/// The live history's timeline: versions recorded, the playlist as it was some seconds ago, start-over.
@Suite("Live timelines", .sharedMachine)
struct LiveTimelineTests {
    /// The version of a live playlist with a window of 4 segments of 2 s whose newest is `newest`; every tenth
    /// segment starts a discontinuity and a new key; dates from `dated` on.
    static func version(newest: Int, dated: Bool = false) throws -> Playlist {
        let first = newest - 3
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        text += "#EXT-X-DISCONTINUITY-SEQUENCE:\(first / 10)\n"
        text += "#EXT-X-KEY:METHOD=AES-128,URI=\"https://o.test/k\(first / 10).key\"\n"
        for number in first...newest {
            if number % 10 == 0, number != first {
                text += "#EXT-X-DISCONTINUITY\n#EXT-X-KEY:METHOD=AES-128,URI=\"https://o.test/k\(number / 10).key\"\n"
            }
            if dated {
                let date = Date(timeIntervalSince1970: 1_800_000_000 + Double(number) * 2)
                text += "#EXT-X-PROGRAM-DATE-TIME:" + ISO8601DateFormatter().string(from: date) + "\n"
            }
            text += "#EXTINF:2.0,\nhttps://o.test/seg\(number).ts\n"
        }
        return try Playlist(parsing: text)
    }

    static func sequence(_ text: String) throws -> Playlist {
        try Playlist(parsing: text)
    }

    @Test("the playlist as it was: the version seen then, with its sequence numbers and the key in force")
    func delayedVersion() throws {
        var timeline = LiveTimeline()
        for step in 0..<30 { timeline.record(try Self.version(newest: 3 + step), fetchedAt: 1000 + Double(step) * 2) }
        #expect(timeline.segments.count == 33 && timeline.versions.count == 30)
        let delayed = try Playlist(parsing: timeline.delayed(by: 20, now: 1058))
        // At 1038 the version seen at 1038 listed 19...22.
        #expect(delayed.mediaSequence == 19)
        #expect(delayed.segments.map(\.uri) == (19...22).map { "https://o.test/seg\($0).ts" })
        #expect(
            delayed.segments.allSatisfy {
                $0.key?.uri == ($0.sequenceNumber < 20 ? "https://o.test/k1.key" : "https://o.test/k2.key")
            })
        #expect(delayed.segments.map(\.discontinuity) == [false, true, false, false])
        #expect(delayed.tags.contains { $0.tag == .discontinuitySequence(1) })
        #expect(delayed.isLive)
        // Before the first version: the segments published by then, estimated from the first version's.
        let early = try Playlist(parsing: timeline.delayed(by: 3, now: 1001))
        #expect(early.segments.map(\.sequenceNumber) == [0, 1, 2])
        #expect {
            try timeline.delayed(by: 600, now: 1058)
        } throws: { error in
            (error as? ManifestViewError)?.isUnprocessable == true
        }
    }

    @Test("while no player asked, segments are placed by when they were published; a hole is never listed as live")
    func gapsInTheHistory() throws {
        var timeline = LiveTimeline()
        timeline.record(try Self.version(newest: 3), fetchedAt: 1000)
        // Nobody asked for 20 s: segments 4 to 9 were never seen; 10 to 13 were published 2 s apart.
        timeline.record(try Self.version(newest: 13), fetchedAt: 1020)
        #expect(timeline.segments.suffix(4).map(\.seenAt) == [1014, 1016, 1018, 1020])
        let delayed = try Playlist(parsing: timeline.delayed(by: 4, now: 1022))
        #expect(delayed.segments.map(\.sequenceNumber) == [10, 11, 12] && delayed.mediaSequence == 10)
        let startOver = try Playlist(parsing: timeline.startOver(from: 994, until: nil, now: 1022))
        #expect(startOver.segments.count == 8)
        #expect(startOver.segments.map(\.discontinuity) == [false, false, false, false, true, false, false, false])
    }

    @Test("start-over from a date: an EVENT playlist from the segment playing then, VOD once the end is reached")
    func startOver() throws {
        var timeline = LiveTimeline()
        for step in 0..<20 {
            timeline.record(try Self.version(newest: 3 + step, dated: true), fetchedAt: 1000 + Double(step) * 2)
        }
        let event = try Playlist(parsing: timeline.startOver(from: 1_800_000_005, until: nil, now: 1040))
        #expect(event.playlistType == .event && !event.hasEndList)
        #expect(event.segments.first?.sequenceNumber == 2 && event.segments.last?.sequenceNumber == 22)
        let ended = try Playlist(parsing: timeline.startOver(from: 1_800_000_005, until: 1_800_000_012, now: 1040))
        #expect(ended.playlistType == .vod && ended.hasEndList)
        #expect(ended.segments.map(\.sequenceNumber) == [2, 3, 4, 5])
        for start in [1_700_000_000.0, 1_900_000_000] {
            #expect {
                try timeline.startOver(from: start, until: nil, now: 1040)
            } throws: { error in
                (error as? ManifestViewError)?.isUnprocessable == true
            }
        }
    }

    /// Found by the `view` fuzzer: a playlist whose URIs use EXT-X-DEFINE variables was written again from the
    /// history without its definitions, and did not parse.
    @Test("a playlist written from the history keeps the origin's EXT-X-DEFINE lines, and parses")
    func definitionsAreKept() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:11
            #EXT-X-DEFINE:IMPORT="cdn"
            #EXT-X-DEFINE:NAME="seg",VALUE="chunk"
            #EXT-X-TARGETDURATION:6
            #EXT-X-KEY:METHOD=AES-128,URI="{$cdn}/keys/k1.key"
            #EXTINF:6,
            {$seg}-1.ts
            #EXTINF:6,
            {$seg}-2.ts

            """
        var timeline = LiveTimeline()
        timeline.record(try Playlist(parsing: text), fetchedAt: 1000)
        let delayed = try timeline.delayed(by: 3, now: 1003)
        let playlist = try Playlist(parsing: delayed)
        #expect(playlist.definitions.count == 2 && playlist.segments.count == 2)
        #expect(delayed.contains("#EXT-X-DEFINE:IMPORT=\"cdn\""))
    }

    /// Found by an attack: 40 key lines of 10 KB, copied into every segment and written once per segment, made a
    /// 0.4 MB playlist a 405 MB history file.
    @Test("key lines are stored once however many segments they cover; lines past the limits are not recorded")
    func keyLinesAreBounded() throws {
        func playlist(keys: Int, keyBytes: Int, segments: Int) throws -> Playlist {
            var text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n"
            for key in 0..<keys {
                let path = String(repeating: "k", count: keyBytes)
                text += "#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"https://o.test/\(path)\",KEYFORMAT=\"f\(key)\"\n"
            }
            for number in 0..<segments { text += "#EXTINF:1,\nhttps://o.test/s\(number).ts\n" }
            return try Playlist(parsing: text)
        }
        var small = LiveTimeline()
        #expect(small.record(try playlist(keys: 4, keyBytes: 1000, segments: 1000), fetchedAt: 1000).count == 1000)
        let stored = try JSONEncoder().encode(small)
        #expect(stored.count < 200_000, "\(stored.count) bytes")
        #expect(try JSONDecoder().decode(LiveTimeline.self, from: stored) == small)
        var large = LiveTimeline()
        #expect(large.record(try playlist(keys: 40, keyBytes: 1000, segments: 10), fetchedAt: 1000).isEmpty)
        #expect(large.record(try playlist(keys: 1, keyBytes: 10_000, segments: 10), fetchedAt: 1001).isEmpty)
        #expect(large.segments.isEmpty)
    }

    @Test("pruned by age, restarted when the sequence goes back, and the same after a round trip through JSON")
    func pruneRestartPersist() throws {
        var timeline = LiveTimeline()
        for step in 0..<10 { timeline.record(try Self.version(newest: 3 + step), fetchedAt: 1000 + Double(step) * 2) }
        timeline.record(try Self.version(newest: 12), fetchedAt: 1000)  // older than the last: ignored
        #expect(timeline.versions.count == 10)
        let decoded = try JSONDecoder().decode(LiveTimeline.self, from: JSONEncoder().encode(timeline))
        #expect(decoded == timeline)
        timeline.prune(before: 1010)
        #expect(timeline.segments.first?.seenAt ?? 0 >= 1010 && timeline.versions.allSatisfy { $0.at >= 1010 })
        timeline.record(try Self.version(newest: 5), fetchedAt: 2000)
        #expect(timeline.segments.map(\.sequence) == [2, 3, 4, 5] && timeline.versions.count == 1)
    }
}
