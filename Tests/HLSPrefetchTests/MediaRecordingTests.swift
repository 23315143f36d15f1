import Foundation
import HLSCacheTestTraits
import HLSPlaylist
import Testing

@testable import HLSPrefetch

@Suite("Recording media playlists", .sharedMachine)
struct MediaRecordingTests {
    static func window(_ first: Int, _ last: Int, end: Bool = false) throws -> Playlist {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        text += "#EXT-X-KEY:METHOD=AES-128,URI=\"k.key\"\n"
        for number in first...last { text += "#EXTINF:2,\nseg\(number).ts\n" }
        if end { text += "#EXT-X-ENDLIST\n" }
        return try Playlist(parsing: text)
    }

    @Test("a sliding window records each segment once; a jump past missed segments marks a discontinuity")
    func slidingWindow() throws {
        let url = "http://h/live.m3u8"
        var recording = MediaRecording(url: url, playlist: try Self.window(10, 13))
        #expect(recording.isLive && !recording.ended)
        let first = recording.record(try Self.window(10, 13), url: url)
        #expect(first.filter { $0.kind == .segment }.count == 4)
        #expect(first.filter { $0.kind == .key }.count == 4)  // one per segment; the prefetcher deduplicates
        #expect(
            recording.record(try Self.window(11, 14), url: url).filter { $0.kind == .segment }.map(\.url) == [
                "http://h/seg14.ts"
            ])
        _ = recording.record(try Self.window(17, 20, end: true), url: url)
        #expect(recording.segments.map(\.sequence) == [10, 11, 12, 13, 14, 17, 18, 19, 20])
        #expect(
            recording.segments.map(\.discontinuity) == [false, false, false, false, false, true, false, false, false])
        #expect(recording.ended)
    }

    @Test("the written EVENT playlist gives keys an explicit IV, skips failed segments, and ends when final")
    func writtenPlaylist() throws {
        let url = "http://h/live.m3u8"
        var recording = MediaRecording(url: url, playlist: try Self.window(10, 13))
        _ = recording.record(try Self.window(10, 13), url: url)
        let failed = recording.segments[1].object
        let text = OutputPlaylists.media(
            recording, isStored: { $0 != failed }, isPending: { _ in false }, final: true)
        #expect(text.contains("#EXT-X-PLAYLIST-TYPE:EVENT"))
        #expect(text.contains("IV=0x0000000000000000000000000000000A"))
        #expect(text.contains("IV=0x0000000000000000000000000000000C"))
        #expect(!text.contains("IV=0x0000000000000000000000000000000B"))
        #expect(text.contains("#EXT-X-DISCONTINUITY"))
        #expect(text.hasSuffix("#EXT-X-ENDLIST\n"))
        #expect(text.components(separatedBy: "#EXTINF").count == 4)
        let running = OutputPlaylists.media(
            recording, isStored: { _ in true }, isPending: { $0 == recording.segments[2].object }, final: false)
        #expect(running.components(separatedBy: "#EXTINF").count == 3)
        #expect(!running.contains("ENDLIST"))
    }
}
