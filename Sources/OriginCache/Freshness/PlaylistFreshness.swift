import DASHManifest
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

    /// The expiry of an MPD received at `now` with `directives`: a dynamic MPD is fresh for its
    /// ``dynamicFreshSeconds(minimumUpdatePeriod:)``, whatever the origin's headers say; a static one like a VOD
    /// playlist.
    package func expiry(of mpd: MPD, directives: CacheDirectives, now: Date) -> Date {
        if mpd.type == .dynamic {
            return now.addingTimeInterval(Self.dynamicFreshSeconds(minimumUpdatePeriod: mpd.minimumUpdatePeriod))
        }
        return directives.expiry(receivedAt: now) ?? now.addingTimeInterval(vodTTL.seconds)
    }

    /// How long a dynamic MPD is fresh: its `minimumUpdatePeriod`, from 1 s to 60 s; 10 s when it has none (the MPD
    /// is not meant to change, but a live presentation may still be extended).
    package static func dynamicFreshSeconds(minimumUpdatePeriod: Double?) -> TimeInterval {
        guard let period = minimumUpdatePeriod else { return 10 }
        return min(max(period, 1), 60)
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
