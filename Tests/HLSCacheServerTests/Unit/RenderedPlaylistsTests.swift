import Foundation
import HLSCacheTestTraits
import NIOCore
import SegmentCache
import Synchronization
import Testing

@testable import HLSCacheServer

/// The in-memory tier for rewritten playlists: who waits for a rendering to be kept is told once, when it is.
@Suite("Rendered playlists", .sharedMachine)
struct RenderedPlaylistsTests {
    static let key = CacheKey(url: "http://origin.test/live/index.m3u8?_HLS_msn=3")

    static func rendering() -> RenderedPlaylist {
        RenderedPlaylist(
            body: .memory(ByteBuffer(string: "#EXTM3U\n")), contentType: "application/vnd.apple.mpegurl",
            isLive: true, isMultivariant: false, liveFreshSeconds: 1, liveStaleLimitSeconds: 6, newestSegments: [])
    }

    @Test("a waiter is called once when the rendering is kept; with that version kept already, it is not registered")
    func waitersAreCalledWhenTheRenderingIsKept() {
        let playlists = RenderedPlaylists(maxBytes: 1 << 20, cacheDirectory: nil)
        let version = Date(timeIntervalSince1970: 100)
        let calls = Atomic<Int>(0)
        for _ in 0..<3 {
            #expect(
                playlists.whenKept(Self.key, fetchedAt: version, patience: .seconds(5)) {
                    calls.add(1, ordering: .relaxed)
                })
        }
        #expect(calls.load(ordering: .relaxed) == 0)
        playlists.keep(Self.rendering(), of: Self.key, fetchedAt: version)
        #expect(calls.load(ordering: .relaxed) == 3)
        playlists.keep(Self.rendering(), of: Self.key, fetchedAt: version)
        #expect(calls.load(ordering: .relaxed) == 3, "called once, not per keep")
        #expect(!playlists.whenKept(Self.key, fetchedAt: version, patience: .seconds(5)) {})
        // Another version is waited for.
        #expect(playlists.whenKept(Self.key, fetchedAt: version + 1, patience: .seconds(5)) {})
    }

    @Test("waiters that gave up are dropped when another one of their key comes")
    func waitersPastTheirPatienceAreDropped() {
        let playlists = RenderedPlaylists(maxBytes: 1 << 20, cacheDirectory: nil)
        let version = Date(timeIntervalSince1970: 100)
        let calls = Atomic<Int>(0)
        #expect(playlists.whenKept(Self.key, fetchedAt: version, patience: .zero) { calls.add(1, ordering: .relaxed) })
        #expect(
            playlists.whenKept(Self.key, fetchedAt: version, patience: .seconds(5)) {
                calls.add(10, ordering: .relaxed)
            })
        playlists.keep(Self.rendering(), of: Self.key, fetchedAt: version)
        #expect(calls.load(ordering: .relaxed) == 10, "the one that gave up is not called")
    }
}
