import Foundation
import HLSPlaylist

/// How long a playlist stays fresh in the cache.
///
/// - Live media playlists (no `EXT-X-ENDLIST`, not `PLAYLIST-TYPE:VOD`): half the target duration, the reload
///   interval RFC 8216bis gives players, whatever the origin's headers say; N players then cause about one
///   origin fetch per half target duration.
/// - VOD media playlists and multivariant playlists: the origin's `Cache-Control`/`Expires`, else a default.
package struct PlaylistFreshness: Sendable {
    /// Freshness of a VOD media playlist whose origin says nothing.
    package var vodTTL: Duration
    /// Freshness of a multivariant playlist whose origin says nothing.
    package var multivariantTTL: Duration

    /// The expiry of `playlist`, received at `now` with `directives`.
    package func expiry(of playlist: Playlist, directives: CacheDirectives, now: Date) -> Date {
        if playlist.kind == .media, playlist.isLive {
            return now.addingTimeInterval(Self.liveFreshSeconds(targetDuration: playlist.targetDuration))
        }
        if let expiry = directives.expiry(receivedAt: now) { return expiry }
        let ttl = playlist.kind == .multivariant ? multivariantTTL : vodTTL
        return now.addingTimeInterval(ttl.seconds)
    }

    /// Half the target duration, at least 0.5 s (a missing target duration counts as 6 s).
    package static func liveFreshSeconds(targetDuration: Int?) -> TimeInterval {
        max(0.5, Double(targetDuration ?? 6) / 2)
    }

    /// How old an expired live playlist may be and still be served when the origin fails: three target durations.
    package static func liveStaleLimitSeconds(targetDuration: Int?) -> TimeInterval {
        Double(targetDuration ?? 6) * 3
    }
}

extension Duration {
    /// The duration in seconds.
    package var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
