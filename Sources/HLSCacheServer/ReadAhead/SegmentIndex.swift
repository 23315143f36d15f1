import ByteRanges
import HLSPlaylist
import OriginCache
import SegmentCache
import Synchronization

/// Where each segment of recently served media playlists sits: which playlist lists it and at which position.
///
/// The server uses it to read ahead in VOD playlists and MPDs (segment k served → fetch k+1…k+N) and to attribute
/// segment traffic to its stream on the status page. Bounded in bytes (``defaultCapacityBytes`` for all the playlists
/// it holds, each costed by ``estimatedBytes(of:)``), the least recently served going first: a count of playlists
/// bounded nothing, since one VOD playlist of 50,000 short segments cost some 50 MB.
final class SegmentIndex: Sendable {
    struct Position: Sendable, Hashable {
        var playlist: String
        var index: Int
        /// Whether serving it reads ahead the segments after it (VOD playlists, MPDs); live HLS playlists read ahead
        /// their newest segments when served instead.
        var readsAhead: Bool
    }

    private struct State {
        var playlists: ClockMap<String, [CacheKey]>
        var positions: [CacheKey: Position] = [:]
    }

    private let state: Mutex<State>

    /// The default bound: 64 MiB for every playlist indexed.
    static let defaultCapacityBytes = 64 << 20

    /// - Parameter capacityBytes: the bound on the estimated bytes of the playlists held.
    init(capacityBytes: Int = SegmentIndex.defaultCapacityBytes) {
        state = Mutex(State(playlists: ClockMap(capacity: capacityBytes)))
    }

    /// What indexing `segments` costs in memory, estimated: per segment its key in the list and in the positions'
    /// table (two entries, a dictionary's slack, the strings' allocations) and its URLs' bytes twice.
    static func estimatedBytes(of segments: [CacheKey]) -> Int {
        segments.reduce(0) { $0 + 512 + 2 * ($1.url.utf8.count + $1.fetchURL.utf8.count) }
    }

    /// The playlists held, and their estimated bytes.
    var size: (playlists: Int, bytes: Int) {
        state.withLock { ($0.playlists.count, $0.playlists.totalCost) }
    }

    /// Records (or replaces) the segments of the media playlist at `url`.
    func record(playlist url: String, segments: [CacheKey], readsAhead: Bool) {
        state.withLock { state in
            if let old = state.playlists.peek(url) {
                // Keys compare without their fetch URLs: new tokens in the same playlist replace the old ones.
                if old == segments, old.map(\.fetchURL) == segments.map(\.fetchURL) { return }
                for key in old where state.positions[key]?.playlist == url { state.positions[key] = nil }
            }
            for (index, key) in segments.enumerated() {
                state.positions[key] = Position(playlist: url, index: index, readsAhead: readsAhead)
            }
            let evicted = state.playlists.insert(segments, forKey: url, cost: Self.estimatedBytes(of: segments))
            for keys in evicted {
                for key in keys {
                    if let playlist = state.positions[key]?.playlist, !state.playlists.contains(playlist) {
                        state.positions[key] = nil
                    }
                }
            }
        }
    }

    /// The playlist listing `key`, and the `count` segments after it when that playlist reads ahead.
    func lookup(_ key: CacheKey, following count: Int) -> (playlist: String, next: [CacheKey])? {
        state.withLock { state in
            guard let position = state.positions[key] else { return nil }
            guard position.readsAhead, count > 0, let segments = state.playlists.peek(position.playlist) else {
                return (position.playlist, [])
            }
            let start = position.index + 1
            return (position.playlist, Array(segments[min(start, segments.count)..<min(start + count, segments.count)]))
        }
    }

    /// The most segments of one playlist the index holds: a longer playlist (some 55 hours of 4-second segments)
    /// is served and cached, but not indexed, so its size cannot make the index grow without bound.
    static let maxSegmentsPerPlaylist = 50_000

    /// The cache keys of a media playlist's segments (byte ranges included), in order; gaps and URIs that
    /// cannot be resolved are left out. A playlist of more than ``maxSegmentsPerPlaylist`` gives only its `newest`
    /// segments (for live read-ahead), and `isComplete` false: it is not indexed. The keys are made by `policy`,
    /// as the requests for the segments will be.
    static func segmentKeys(
        of playlist: Playlist, url: String, newest: Int, policy: CacheKeyPolicy
    ) -> (keys: [CacheKey], isComplete: Bool) {
        let targets = playlist.segmentTargets(playlistURL: url, limit: maxSegmentsPerPlaylist + 1)
        guard targets.count <= maxSegmentsPerPlaylist else {
            return (keys(of: playlist.segmentTargets(playlistURL: url, newest: newest), policy: policy), false)
        }
        return (keys(of: targets, policy: policy), true)
    }

    private static func keys(of targets: [SegmentTarget], policy: CacheKeyPolicy) -> [CacheKey] {
        targets.compactMap { target in
            guard let range = target.byteRange else { return policy.key(for: target.url) }
            // A zero-length range names no bytes: nothing to read ahead.
            guard range.length > 0 else { return nil }
            return policy.key(for: target.url, range: range)
        }
    }
}
