import HLSCacheTestTraits
import SegmentCache
import Testing

@testable import HLSCacheServer

/// The read-ahead index is bounded by the bytes its playlists cost, not by how many it holds.
@Suite("Segment index", .sharedMachine)
struct SegmentIndexTests {
    static func playlist(_ number: Int, segments: Int) -> (url: String, keys: [CacheKey]) {
        let url = "http://127.0.0.1:9/vod\(number)/index.m3u8"
        return (url, (0..<segments).map { CacheKey(url: "http://127.0.0.1:9/vod\(number)/\($0).ts") })
    }

    @Test("item 10: a dozen VOD playlists of 50,000 segments stay within the index's bytes, the newest kept")
    func indexIsBoundedInBytes() {
        let index = SegmentIndex()
        var newest: (url: String, keys: [CacheKey])?
        for number in 0..<12 {
            let playlist = Self.playlist(number, segments: 50_000)
            index.record(playlist: playlist.url, segments: playlist.keys, readsAhead: true)
            newest = playlist
        }
        let size = index.size
        #expect(size.bytes <= SegmentIndex.defaultCapacityBytes, "\(size)")
        // A count bound (32) kept all twelve: some 600 MB.
        #expect(size.playlists <= 3, "\(size)")
        guard let newest else { return }
        #expect(index.lookup(newest.keys[10], following: 2)?.next == Array(newest.keys[11...12]))
        // The oldest went, with their positions.
        #expect(index.lookup(Self.playlist(0, segments: 1).keys[0], following: 2) == nil)
    }

    @Test("a playlist larger than the whole bound is not kept, and leaves no position behind")
    func oversizedPlaylistLeavesNothing() {
        let index = SegmentIndex(capacityBytes: 1 << 20)
        let playlist = Self.playlist(1, segments: 10_000)
        index.record(playlist: playlist.url, segments: playlist.keys, readsAhead: true)
        #expect(index.size.playlists == 0)
        #expect(index.lookup(playlist.keys[5], following: 1) == nil)
    }
}
