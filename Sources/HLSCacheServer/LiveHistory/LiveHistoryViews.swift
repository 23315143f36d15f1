import Foundation
import HLSPlaylist
import ManifestURLs
import OriginCache

/// Where a rendering meets the live history: each new version of a live media playlist is recorded (and its new
/// segments queued for fetching), and a view with a delay or a start is written from the history instead of from the
/// origin's current version.
struct LiveHistoryViews {
    let components: ServerComponents

    /// The media playlist `playlist` (fetched from `url` at `fetchedAt`, its references relative to `base`) as the
    /// history gives it for `view`: recorded first; the origin's own when the view asks nothing of the history.
    /// - Throws: ``ManifestViewError`` when the history cannot give what the view asks (none kept, or not that far
    ///   back).
    func playlist(
        _ playlist: Playlist, url: String, base: String, fetchedAt: Date, view: ManifestView
    ) throws -> Playlist {
        let history = components.liveHistory
        if let history, playlist.isLive || (playlist.hasEndList && history.timeline(of: url) != nil) {
            record(playlist, url: url, base: base, fetchedAt: fetchedAt, in: history)
        }
        guard view.delaySeconds != nil || view.start != nil else { return playlist }
        guard let history else {
            throw ManifestViewError.beforeHistory("the live history is off (--live-history 0): no delay or start-over")
        }
        guard let timeline = history.timeline(of: url) else {
            // Not a live playlist, and never one: a delay or a start changes nothing of it.
            return playlist
        }
        let now = Date().timeIntervalSince1970
        let text: String
        if let start = view.start {
            text = try timeline.startOver(from: start, until: view.end, now: now)
        } else {
            text = try timeline.delayed(by: view.delaySeconds ?? 0, now: now)
        }
        do {
            return try Playlist(parsing: text)
        } catch {
            throw ManifestViewError.unrenderable("the playlist written from the live history does not parse: \(error)")
        }
    }

    /// Records a version (its URIs made absolute) and queues the segments, keys and maps it lists first.
    private func record(_ playlist: Playlist, url: String, base: String, fetchedAt: Date, in history: LiveHistory) {
        guard let bytes = try? playlist.rewritten(playlistURL: base, mapping: .custom { $0 }),
            let absolute = try? Playlist(parsing: bytes)
        else { return }
        let urls = history.record(url: url, absolute, fetchedAt: fetchedAt)
        guard !urls.isEmpty else { return }
        let policy = components.origin.keys
        components.historyReadAhead.enqueue(urls.map { policy.key(for: $0) }, after: ReadAhead.liveVersionDelay)
    }
}
