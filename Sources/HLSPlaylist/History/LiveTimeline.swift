import Foundation
import ManifestURLs

/// What a live media playlist listed over time: every segment once, and which of them each version seen listed. From
/// it, the playlist as it was some seconds ago (`hlscache.delay`) and start-over from a time (`hlscache.start`,
/// `hlscache.end`) are written again. No I/O: the server keeps, bounds and persists timelines.
public struct LiveTimeline: Codable, Sendable, Equatable {
    /// Which segments one version of the playlist listed, and when it was fetched (Unix seconds).
    public struct Version: Codable, Sendable, Equatable {
        /// When it was fetched, Unix seconds.
        public var at: Double
        /// The sequence number of its first segment.
        public var first: Int
        /// The sequence number of its last segment.
        public var last: Int
    }

    /// The playlist's `EXT-X-TARGETDURATION` (the largest seen).
    public var targetDuration = 1
    /// Its `EXT-X-VERSION`, if any.
    public var version: Int?
    /// Every segment seen, by ascending sequence number.
    public private(set) var segments: [HistorySegment] = []
    /// The versions seen, oldest first.
    public private(set) var versions: [Version] = []
    /// Its `EXT-X-DEFINE` lines (a player resolves what they declare, as in the origin's own playlist).
    public var definitions: [String] = []
    /// Whether the origin ended the stream (`EXT-X-ENDLIST`).
    public private(set) var ended = false

    /// The most segments kept (five and a half hours of 1 s segments; `--live-history` is 2 hours by default).
    public static let maxSegments = 20_000
    /// The longest key, map or definition line kept, and the most bytes of them a segment may have in force: a
    /// version past either is not recorded (a hostile origin's kilobytes of key lines are not copied per segment).
    public static let maxLineBytes = 4096
    /// The most bytes of key and map lines one segment may have in force (see ``maxLineBytes``).
    public static let maxLinesBytesPerSegment = 16 << 10

    /// About how many bytes the timeline holds (its segments' URIs and numbers; key and map lines are shared).
    public private(set) var estimatedBytes = 0

    /// An empty timeline.
    public init() {}

    /// Records a version of the playlist (its URIs absolute), fetched at `fetchedAt`.
    /// - Returns: the segments seen for the first time. A version no newer than the last is ignored; one whose
    ///   sequence numbers went back (the origin restarted the stream) starts the timeline afresh.
    @discardableResult
    public mutating func record(_ playlist: Playlist, fetchedAt: Double) -> [HistorySegment] {
        guard playlist.kind == .media, versions.last.map({ fetchedAt > $0.at }) ?? true else { return [] }
        var listed = playlist.historySegments(fetchedAt: fetchedAt)
        guard let first = listed.first, let last = listed.last, Self.isKeepable(listed, playlist) else { return [] }
        if let newest = segments.last,
            last.sequence < newest.sequence
                || segments.contains(where: { $0.sequence == first.sequence && $0.uri != first.uri })
        {
            self = LiveTimeline()
        }
        targetDuration = max(targetDuration, playlist.targetDuration ?? 1)
        version = playlist.tags.lazy.compactMap { if case .version(let value) = $0.tag { value } else { nil } }.first
        ended = playlist.hasEndList
        definitions = playlist.lines.filter { $0.kind == .tag(.define) }.map {
            $0.text.trimmingCharacters(in: .whitespaces)
        }
        // When each segment was published, as well as it can be told: about when the ones after it in this version
        // had not played yet, and not before the last version seen without it (the first version has none).
        let previous = versions.last?.at ?? -Double.greatestFiniteMagnitude
        var later = 0.0
        for index in listed.indices.reversed() {
            listed[index].seenAt = max(fetchedAt - later, min(previous + 0.001, fetchedAt))
            later += max(0, listed[index].duration)
        }
        let newest = segments.last?.sequence ?? Int.min
        var fresh = listed.filter { $0.sequence > newest }
        // Key and map lines equal to the last segment's share its strings (each version parses them anew).
        var shared = segments.last
        for index in fresh.indices {
            if let previous = shared {
                if fresh[index].keys == previous.keys { fresh[index].keys = previous.keys }
                if fresh[index].map == previous.map { fresh[index].map = previous.map }
            }
            shared = fresh[index]
            estimatedBytes += Self.bytes(of: fresh[index])
        }
        segments.append(contentsOf: fresh)
        versions.append(Version(at: fetchedAt, first: first.sequence, last: last.sequence))
        if segments.count > Self.maxSegments { dropOldest(segments.count - Self.maxSegments) }
        return fresh
    }

    /// Whether a version's lines are small enough to keep (``maxLineBytes``, ``maxLinesBytesPerSegment``).
    private static func isKeepable(_ listed: [HistorySegment], _ playlist: Playlist) -> Bool {
        var checked: [String] = []
        for segment in listed where segment.keys != checked {
            checked = segment.keys
            let bytes = segment.keys.reduce(segment.map?.utf8.count ?? 0) { $0 + $1.utf8.count }
            guard bytes <= maxLinesBytesPerSegment, segment.keys.allSatisfy({ $0.utf8.count <= maxLineBytes }),
                (segment.map?.utf8.count ?? 0) <= maxLineBytes
            else { return false }
        }
        let definitions = playlist.lines.filter { $0.kind == .tag(.define) }
        return definitions.count <= 64 && definitions.allSatisfy { $0.text.utf8.count <= maxLineBytes }
    }

    /// What a segment costs, about: its URI and byte range, and some fixed fields.
    private static func bytes(of segment: HistorySegment) -> Int {
        segment.uri.utf8.count + (segment.byteRange?.utf8.count ?? 0) + 128
    }

    /// Drops the `count` oldest segments.
    public mutating func dropOldest(_ count: Int) {
        let count = min(count, segments.count)
        for segment in segments.prefix(count) { estimatedBytes -= Self.bytes(of: segment) }
        segments.removeFirst(count)
    }

    /// Drops what started before `time` (Unix seconds).
    public mutating func prune(before time: Double) {
        dropOldest(segments.firstIndex { $0.startTime >= time } ?? segments.count)
        versions.removeAll { $0.at < time }
    }

    /// Whether the timeline lists `uri`.
    public func lists(_ uri: String) -> Bool { segments.contains { $0.uri == uri } }

    /// The playlist as the origin had it `seconds` before `now`: the version seen then, when one was seen within a
    /// target duration of then; else (no player asked for a while, or before the first version seen) the segments
    /// published by then (``HistorySegment/seenAt``), as many as the nearest version listed.
    /// - Throws: ``ManifestViewError/beforeHistory(_:)`` when the history does not reach back that far.
    public func delayed(by seconds: Double, now: Double) throws(ManifestViewError) -> String {
        let then = now - seconds
        var listed: ArraySlice<HistorySegment>
        let seen = versions.last { $0.at <= then }
        if let version = seen, version.at >= then - Double(targetDuration) {
            listed = segments[...].filter { $0.sequence >= version.first && $0.sequence <= version.last }[...]
        } else {
            let nearest = seen ?? versions.first
            let count = nearest.map { $0.last - $0.first + 1 } ?? 0
            listed = segments[...].filter { $0.seenAt <= then }.suffix(count)
        }
        // Only the newest run without a hole (segments no version seen listed, while no player asked): a live
        // playlist's sequence numbers count its segments.
        if let cut = listed.indices.dropFirst().last(where: { listed[$0].sequence != listed[$0 - 1].sequence + 1 }) {
            listed = listed[cut...]
        }
        guard !listed.isEmpty else {
            let held = segments.first.map { Int(max(0, min(now - $0.seenAt, 1e9))) } ?? 0
            throw .beforeHistory(
                "hlscache holds \(held) s of this stream's history, less than a delay of \(Self.number(seconds)) s")
        }
        return render(listed, type: nil, ended: false)
    }

    /// Start-over: the segments from the one playing at `start` (by date, else by when hlscache first saw it), up to
    /// `end` if given: an `EVENT` playlist growing until then (or until the origin ends the stream), then VOD.
    /// - Throws: ``ManifestViewError/beforeHistory(_:)`` for a start before the history, or after its newest segment.
    public func startOver(from start: Double, until end: Double?, now: Double) throws(ManifestViewError) -> String {
        guard let oldest = segments.first, let newest = segments.last else {
            throw .beforeHistory("hlscache holds no history of this stream yet")
        }
        guard start >= oldest.startTime - Double(targetDuration) else {
            throw .beforeHistory(
                "hlscache.start is before this stream's history, which starts at "
                    + Playlist.dateText(Date(timeIntervalSince1970: oldest.startTime)))
        }
        guard start < newest.startTime + newest.duration else {
            throw .beforeHistory("hlscache.start is after this stream's newest segment")
        }
        let first = segments.lastIndex { $0.startTime <= start } ?? 0
        var listed = segments[first...]
        var complete = ended
        if let end {
            listed = listed.prefix { $0.startTime < end }
            if newest.startTime + newest.duration >= end { complete = true }
        }
        return render(listed, type: complete ? "VOD" : "EVENT", ended: complete)
    }

    /// What a timeline is stored as: each distinct key, map or definition line once, segments naming them by index.
    private struct Stored: Codable {
        struct Segment: Codable {
            var s: Int
            var ds: Int
            var d: Double
            var u: String
            var br: String?
            var dc: Bool
            var g: Bool
            var k: [Int]
            var m: Int?
            var dt: Double?
            var at: Double
        }

        var targetDuration: Int
        var version: Int?
        var definitions: [String]
        var ended: Bool
        var versions: [Version]
        var lines: [String]
        var segments: [Segment]
    }

    /// Stores the timeline (``Stored``: each distinct line once).
    public func encode(to encoder: any Encoder) throws {
        var lines: [String] = []
        var numbers: [String: Int] = [:]
        func number(_ line: String) -> Int {
            if let known = numbers[line] { return known }
            lines.append(line)
            numbers[line] = lines.count - 1
            return lines.count - 1
        }
        let stored = segments.map { segment in
            Stored.Segment(
                s: segment.sequence, ds: segment.discontinuitySequence, d: segment.duration, u: segment.uri,
                br: segment.byteRange, dc: segment.discontinuity, g: segment.gap, k: segment.keys.map(number),
                m: segment.map.map(number), dt: segment.date, at: segment.seenAt)
        }
        try Stored(
            targetDuration: targetDuration, version: version, definitions: definitions, ended: ended,
            versions: versions, lines: lines, segments: stored
        ).encode(to: encoder)
    }

    /// Reads a stored timeline.
    public init(from decoder: any Decoder) throws {
        let stored = try Stored(from: decoder)
        func line(_ index: Int) throws -> String {
            guard stored.lines.indices.contains(index) else {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no line \(index)"))
            }
            return stored.lines[index]
        }
        targetDuration = stored.targetDuration
        version = stored.version
        definitions = stored.definitions
        ended = stored.ended
        versions = stored.versions
        segments = try stored.segments.map { segment in
            HistorySegment(
                sequence: segment.s, discontinuitySequence: segment.ds, duration: segment.d, uri: segment.u,
                byteRange: segment.br, discontinuity: segment.dc, gap: segment.g, keys: try segment.k.map(line),
                map: try segment.m.map(line), date: segment.dt, seenAt: segment.at)
        }
        estimatedBytes = segments.reduce(0) { $0 + Self.bytes(of: $1) }
    }

    /// A media playlist listing `listed`, each with the key, map, discontinuity and date tags it needs.
    private func render(_ listed: ArraySlice<HistorySegment>, type: String?, ended: Bool) -> String {
        var text = "#EXTM3U\n"
        if let version { text += "#EXT-X-VERSION:\(version)\n" }
        for line in definitions { text += line + "\n" }
        let longest = listed.map(\.duration).max() ?? 0
        text += "#EXT-X-TARGETDURATION:\(max(targetDuration, Int(longest.rounded())))\n"
        if let type { text += "#EXT-X-PLAYLIST-TYPE:\(type)\n" }
        guard let head = listed.first else { return text + (ended ? "#EXT-X-ENDLIST\n" : "") }
        text += "#EXT-X-MEDIA-SEQUENCE:\(head.sequence)\n"
        text += "#EXT-X-DISCONTINUITY-SEQUENCE:\(head.discontinuitySequence)\n"
        var keys: [String] = []
        var map: String?
        var previous: HistorySegment?
        for segment in listed {
            // A hole in the history (segments no version seen listed) is a discontinuity too.
            if let previous, segment.discontinuity || segment.sequence != previous.sequence + 1 {
                text += "#EXT-X-DISCONTINUITY\n"
            }
            if segment.keys != keys {
                text += segment.keys.isEmpty ? "#EXT-X-KEY:METHOD=NONE\n" : segment.keys.joined(separator: "\n") + "\n"
                keys = segment.keys
            }
            if segment.map != map, let line = segment.map {
                text += line + "\n"
                map = line
            }
            if let date = segment.date {
                text += "#EXT-X-PROGRAM-DATE-TIME:" + Playlist.dateText(Date(timeIntervalSince1970: date)) + "\n"
            }
            if segment.gap { text += "#EXT-X-GAP\n" }
            text += "#EXTINF:\(segment.duration),\n"
            if let range = segment.byteRange { text += "#EXT-X-BYTERANGE:\(range)\n" }
            text += segment.uri + "\n"
            previous = segment
        }
        return text + (ended ? "#EXT-X-ENDLIST\n" : "")
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
