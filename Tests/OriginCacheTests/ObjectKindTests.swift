import Foundation
import HLSCacheTestTraits
import SegmentCache
import Testing

@testable import OriginCache

/// What an object is, decided once at fill time by one rule, and read back from the entry.
@Suite("Object kinds", .sharedMachine)
struct ObjectKindTests {
    @Test(
        "an answer is classified by its type, its path, then its first bytes",
        arguments: [
            ("https://o/a/index.m3u8", nil, "", ObjectKind.hlsPlaylist),
            ("https://o/a/INDEX.M3U?x=1", nil, "", .hlsPlaylist),
            ("https://o/a/playlist", "application/x-mpegURL", "", .hlsPlaylist),
            ("https://o/a/playlist", "text/plain", "\u{FEFF}#EXTM3U\n", .hlsPlaylist),
            ("https://o/a/seg.ts", "video/mp2t", "G", .media),
            // A media type with a media extension is decided by the head: the body is not waited for, whatever it
            // starts with. Without one, the first line still makes a playlist.
            ("https://o/a/seg.ts", "video/mp2t", "#EXTM3U\n", .media),
            ("https://o/live/chunklist", "video/MP2T", "#EXTM3U\n", .hlsPlaylist),
            ("https://o/live/chunklist", "video/MP2T", "G", .media),
            ("https://o/a/seg.ts", "application/octet-stream", "#EXTM3U\n", .hlsPlaylist),
            ("https://o/a/manifest", "application/xml", "<?xml version=\"1.0\"?><MPD>", .dashManifest),
            ("https://o/a/seg.ts", "application/octet-stream", "G", .media),
            ("https://o/a/seg.m4s", nil, "", .media),
            ("https://o/a/key.key", "application/octet-stream", "", .key),
            ("https://o/a/poster.jpg", "image/jpeg", "", .other),
        ])
    func classifies(url: String, contentType: String?, body: String, expected: ObjectKind) {
        #expect(ObjectKind.classify(url: url, contentType: contentType, firstBytes: Array(body.utf8)) == expected)
    }

    @Test(
        "the head alone decides manifest types and paths, and media types with media extensions; the rest needs the first bytes"
    )
    func classifiedByTheHead() {
        #expect(ObjectKind.classify(url: "https://o/a/seg.ts", contentType: "video/MP2T") == .media)
        #expect(ObjectKind.classify(url: "https://o/a/live", contentType: "audio/x-mpegurl") == .hlsPlaylist)
        #expect(ObjectKind.classify(url: "https://o/a/index.mpd", contentType: nil) == .dashManifest)
        #expect(ObjectKind.classify(url: "https://o/a/seg.ts", contentType: "application/octet-stream") == nil)
        #expect(ObjectKind.classify(url: "https://o/live/chunklist", contentType: "video/MP2T") == nil)
        #expect(ObjectKind.classify(url: "https://o/a/poster.jpg", contentType: nil) == nil)
    }

    @Test("an entry written before kinds were stored is read by its content type")
    func olderEntries() {
        let key = CacheKey(url: "https://o/live/chunklist")
        let playlist = EntryMetadata(
            key: key, status: 200, contentType: "application/vnd.apple.mpegurl", fetchedAt: Date())
        #expect(playlist.objectKind == .hlsPlaylist)
        let stored = EntryMetadata(key: key, status: 200, contentType: "video/mp2t", fetchedAt: Date(), kind: 3)
        #expect(stored.objectKind == .key)
    }
}

/// How long a playlist stays fresh.
@Suite("Playlist freshness", .sharedMachine)
struct PlaylistFreshnessTests {
    @Test("live playlists stay fresh half a target duration, at least half a second; stale up to three")
    func live() {
        #expect(PlaylistFreshness.liveFreshSeconds(targetDuration: 6) == 3)
        #expect(PlaylistFreshness.liveFreshSeconds(targetDuration: 0) == 0.5)
        #expect(PlaylistFreshness.liveFreshSeconds(targetDuration: nil) == 3)
        #expect(PlaylistFreshness.liveStaleLimitSeconds(targetDuration: 4) == 12)
    }
}
