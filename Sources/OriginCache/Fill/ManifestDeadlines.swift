import Foundation
import SegmentCache
import Synchronization

/// How long a manifest fetch may take in all, decided here for every manifest: a live playlist must arrive within
/// about one target duration (at least ``liveFloor``), since players need it before their buffer runs dry; any
/// other manifest (VOD, multivariant, one never seen) within ``manifestTimeout``. A trickling origin then ends in a
/// timeout (a 504, or the stale copy) instead of holding players for the client's 300 s total.
///
/// Which URLs are live is learnt when their playlists are parsed; the memory is bounded.
final class ManifestDeadlines: Sendable {
    /// The shortest deadline of a live manifest.
    static let liveFloor: TimeInterval = 3
    /// The most URLs remembered as live.
    static let capacity = 4096

    /// The total deadline of a manifest not known to be live.
    let manifestTimeout: Duration
    /// Manifests parsed before, by URL: their live period, or 0 when not live.
    private let live = Mutex(ClockMap<String, TimeInterval>(capacity: ManifestDeadlines.capacity))
    /// The directories (URL up to its last `/`) of live manifests, with their refresh periods: their segments are
    /// live segments, whose 404 must not outlive half a period (``liveSegmentPeriod(of:)``).
    private let liveDirectories = Mutex(ClockMap<String, TimeInterval>(capacity: ManifestDeadlines.capacity))

    init(manifestTimeout: Duration) {
        self.manifestTimeout = manifestTimeout
    }

    /// The total deadline of a fetch of `url`, or `nil` when it is not a manifest (by its path, or because it was
    /// parsed as one before).
    func deadline(for url: String, guessedManifest: Bool) -> Duration? {
        switch live.withLock({ $0.value(forKey: url) }) {
        case let seconds? where seconds > 0: return .milliseconds(Int64(seconds * 1000))
        case .some: return manifestTimeout  // parsed as a manifest before, not live
        case nil: return guessedManifest ? manifestTimeout : nil
        }
    }

    /// Notes what a parsed manifest is: live with this refresh period (target duration or update period), or not.
    func note(_ url: String, livePeriod: TimeInterval?) {
        live.withLock { live in
            // 0: a manifest, not live (its deadline is manifestTimeout).
            _ = live.insert(livePeriod.map { max(Self.liveFloor, $0) } ?? 0, forKey: url)
        }
        guard let livePeriod, livePeriod > 0 else { return }
        let directory = Self.directory(of: url)
        liveDirectories.withLock { directories in _ = directories.insert(livePeriod, forKey: directory) }
    }

    /// The refresh period of a live manifest in the directory of `url`, if one was parsed: `url` is then taken for
    /// one of its segments.
    func liveSegmentPeriod(of url: String) -> TimeInterval? {
        let directory = Self.directory(of: url)
        return liveDirectories.withLock { $0.value(forKey: directory) }
    }

    /// `url` up to its path's last `/` (no query).
    private static func directory(of url: String) -> String {
        let path = url.prefix { $0 != "?" && $0 != "#" }
        guard let slash = path.lastIndex(of: "/") else { return String(path) }
        return String(path[...slash])
    }
}
