import Foundation
import HLSPlaylist
import Logging
import Synchronization

/// The live history (`--live-history`): for each live media playlist players watch, the timeline hlscache saw
/// (``LiveTimeline``), for `hlscache.delay` and start-over. Bounded (``maxTimelines`` playlists and ``maxSegments``
/// segments and ``maxBytes`` in all, each playlist pruned by age and capped at ``LiveTimeline/maxSegments``), and
/// persisted in the cache directory (one JSON file per playlist, each distinct key or map line once, written again
/// every ``persistInterval`` when it changed, off the requests' way, and at a graceful stop), so that a restart keeps
/// it.
final class LiveHistory: Sendable {
    /// How long a segment is kept, seconds.
    let keepSeconds: Double
    /// Where the timelines are persisted (`<cache dir>/live-history`), if anywhere.
    let directory: String?
    private let logger: Logger
    private let state = Mutex<State>(State())

    /// The most playlists followed at once; the one recorded least recently goes first.
    static let maxTimelines = 256
    /// The most segments kept over all playlists: past it, or past ``maxBytes``, the playlists recorded least
    /// recently go.
    static let maxSegments = 200_000
    /// About the most bytes kept over all playlists (``LiveTimeline/estimatedBytes``; on disk, about as many).
    static let maxBytes = 64 << 20
    /// The most segments of a playlist's first version fetched when it is first recorded: its newest (a DVR
    /// playlist of hours is not downloaded whole because a player opened it).
    static let firstVersionFetches = 32
    /// How often a timeline is written to its file at most, seconds.
    static let persistInterval = 10.0

    private struct Entry {
        var timeline: LiveTimeline
        var lastRecorded: Double
        var lastPersisted: Double
    }

    private struct State {
        var timelines: [String: Entry] = [:]
    }

    /// What a timeline's file holds.
    private struct Persisted: Codable {
        var url: String
        var timeline: LiveTimeline
    }

    /// - Parameters:
    ///   - keepSeconds: `--live-history`.
    ///   - cacheDirectory: the cache directory, if the server has one on disk; the history loads from it.
    init(keepSeconds: Double, cacheDirectory: String?, logger: Logger) {
        self.keepSeconds = keepSeconds
        self.logger = logger
        directory = cacheDirectory.map { $0 + "/live-history" }
        load()
    }

    /// Records a version of a live media playlist fetched at `fetchedAt`, its URIs absolute.
    /// - Returns: the segments seen for the first time (their URLs, and those of keys and maps first seen), for the
    ///   caller to fetch: start-over finds them cached even once the origin dropped them.
    func record(url: String, _ playlist: Playlist, fetchedAt: Date) -> [String] {
        let now = fetchedAt.timeIntervalSince1970
        var evicted: [String] = []
        let urls = state.withLock { state -> [String] in
            var entry =
                state.timelines[url] ?? Entry(timeline: LiveTimeline(), lastRecorded: now, lastPersisted: 0)
            let knownKeys = Set(entry.timeline.segments.suffix(1).flatMap(\.keys))
            let knownMap = entry.timeline.segments.last?.map
            let fresh = entry.timeline.record(playlist, fetchedAt: now)
            // A timeline (re)started with this version: of what it lists, only its newest are fetched.
            let firstVersion = entry.timeline.versions.count == 1
            entry.timeline.prune(before: now - keepSeconds)
            if entry.timeline.estimatedBytes > Self.maxBytes {
                // One playlist alone past the budget: its oldest segments go.
                let each = max(1, entry.timeline.estimatedBytes / max(1, entry.timeline.segments.count))
                entry.timeline.dropOldest((entry.timeline.estimatedBytes - Self.maxBytes) / each + 1)
            }
            entry.lastRecorded = now
            state.timelines[url] = entry
            evicted = Self.evict(&state, keeping: url)
            let fetched = firstVersion ? Array(fresh.suffix(Self.firstVersionFetches)) : fresh
            // Whole segments (a byte range is fetched as players ask), and the keys and maps first seen with them.
            var urls = fetched.filter { $0.byteRange == nil }.map(\.uri)
            for segment in fetched {
                urls += segment.keys.filter { !knownKeys.contains($0) }.compactMap(Self.uri(inTagLine:))
                if let map = segment.map, map != knownMap, let url = Self.uri(inTagLine: map) { urls.append(url) }
            }
            return urls
        }
        for url in evicted {
            if let path = file(of: url) { try? FileManager.default.removeItem(atPath: path) }
        }
        var seen = Set<String>()
        return urls.filter { seen.insert($0).inserted }
    }

    /// The absolute `http(s)` `URI` of a key or map line.
    static func uri(inTagLine line: String) -> String? {
        guard let start = line.range(of: "URI=\"") else { return nil }
        let rest = line[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        let url = String(rest[..<end])
        return url.hasPrefix("http://") || url.hasPrefix("https://") ? url : nil
    }

    /// Drops the playlists recorded least recently (never `kept`) while past ``maxTimelines`` or ``maxSegments``.
    /// - Returns: their URLs, whose files go too.
    private static func evict(_ state: inout State, keeping kept: String) -> [String] {
        var evicted: [String] = []
        var total = state.timelines.values.reduce(0) { $0 + $1.timeline.segments.count }
        var bytes = state.timelines.values.reduce(0) { $0 + $1.timeline.estimatedBytes }
        while state.timelines.count > maxTimelines || total > maxSegments || bytes > maxBytes {
            guard
                let oldest = state.timelines.filter({ $0.key != kept })
                    .min(by: { $0.value.lastRecorded < $1.value.lastRecorded })
            else { break }
            total -= oldest.value.timeline.segments.count
            bytes -= oldest.value.timeline.estimatedBytes
            state.timelines[oldest.key] = nil
            evicted.append(oldest.key)
        }
        return evicted
    }

    /// Writes every timeline changed since it was last written: every ``persistInterval`` (``LiveHistoryService``,
    /// off the requests' way) and at a graceful stop.
    func persistAll() {
        let changed = state.withLock { state -> [Persisted] in
            var changed: [Persisted] = []
            for (url, entry) in state.timelines where entry.lastRecorded > entry.lastPersisted {
                changed.append(Persisted(url: url, timeline: entry.timeline))
                state.timelines[url]?.lastPersisted = entry.lastRecorded
            }
            return changed
        }
        for persisted in changed { persist(persisted) }
    }

    /// The timeline of `url`, if it is followed.
    func timeline(of url: String) -> LiveTimeline? {
        state.withLock { $0.timelines[url]?.timeline }
    }

    /// Whether a followed timeline lists the segment at `url`.
    func lists(segment url: String) -> Bool {
        state.withLock { state in state.timelines.values.contains { $0.timeline.lists(url) } }
    }

    /// The file of `url`'s timeline.
    private func file(of url: String) -> String? {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in url.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return directory.map { $0 + "/" + String(hash, radix: 16) + ".json" }
    }

    /// Writes a timeline to its file (a temporary file renamed over it: a crash leaves the old one or the new one).
    private func persist(_ persisted: Persisted) {
        guard let path = file(of: persisted.url), let directory else { return }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let data = try JSONEncoder().encode(persisted)
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            logger.warning(
                "live history not saved",
                metadata: ["url": "\(SecretRedaction.redact(persisted.url))", "error": "\(error)"])
        }
    }

    /// Loads the persisted timelines, pruned by age; files of timelines wholly past go.
    private func load() {
        guard let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let now = Date().timeIntervalSince1970
        var loaded: [String: Entry] = [:]
        for name in names where name.hasSuffix(".json") {
            let path = directory + "/" + name
            guard let data = FileManager.default.contents(atPath: path),
                var persisted = try? JSONDecoder().decode(Persisted.self, from: data)
            else {
                try? FileManager.default.removeItem(atPath: path)
                continue
            }
            persisted.timeline.prune(before: now - keepSeconds)
            guard !persisted.timeline.segments.isEmpty else {
                try? FileManager.default.removeItem(atPath: path)
                continue
            }
            loaded[persisted.url] = Entry(timeline: persisted.timeline, lastRecorded: now, lastPersisted: now)
        }
        state.withLock { $0.timelines = loaded }
        if !loaded.isEmpty { logger.info("live history loaded", metadata: ["playlists": "\(loaded.count)"]) }
    }
}
