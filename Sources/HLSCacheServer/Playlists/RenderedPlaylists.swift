import Foundation
import NIOCore
import SegmentCache
import Synchronization

/// A playlist as served: rewritten bytes and what the server needs to know about it, computed once per
/// origin version.
struct RenderedPlaylist: Sendable {
    /// The rewritten playlist, shared by every response that sends it.
    var body: ByteBuffer
    /// Whether it is a live media playlist.
    var isLive: Bool
    /// Whether it is a multivariant playlist.
    var isMultivariant: Bool
    /// Its target duration, seconds.
    var targetDuration: Int?
    /// Its segments' keys, for read-ahead and stream attribution (media playlists).
    var segments: [CacheKey]
}

/// The in-memory tier for rewritten playlists: keyed by cache key and the origin version (`fetchedAt`), so a
/// refreshed playlist is rendered again and a hit costs no parse and no rewrite. Bounded by bytes; the oldest
/// renderings go first.
final class RenderedPlaylists: Sendable {
    private struct Entry {
        var fetchedAt: Date
        var playlist: RenderedPlaylist
    }

    private struct State {
        var entries: [CacheKey: Entry] = [:]
        var order: [CacheKey] = []
        var bytes = 0
    }

    private let maxBytes: Int
    private let state = Mutex(State())

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    /// The rendering of `key` made from the version fetched at `fetchedAt`, if there is one.
    func rendering(of key: CacheKey, fetchedAt: Date) -> RenderedPlaylist? {
        state.withLock { state in
            guard let entry = state.entries[key], entry.fetchedAt == fetchedAt else { return nil }
            return entry.playlist
        }
    }

    /// Keeps a rendering, replacing older ones of the same key.
    func keep(_ playlist: RenderedPlaylist, of key: CacheKey, fetchedAt: Date) {
        let size = playlist.body.readableBytes + playlist.segments.count * 64
        guard size <= maxBytes / 4 else { return }
        state.withLock { state in
            if let old = state.entries[key] {
                state.bytes -= old.playlist.body.readableBytes + old.playlist.segments.count * 64
                state.order.removeAll { $0 == key }
            }
            state.entries[key] = Entry(fetchedAt: fetchedAt, playlist: playlist)
            state.order.append(key)
            state.bytes += size
            while state.bytes > maxBytes, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                if let entry = state.entries.removeValue(forKey: oldest) {
                    state.bytes -= entry.playlist.body.readableBytes + entry.playlist.segments.count * 64
                }
            }
        }
    }
}
