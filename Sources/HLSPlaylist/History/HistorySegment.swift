import ByteRanges
import Foundation

/// One segment of a live media playlist as the history keeps it (``LiveTimeline``): everything needed to list it
/// again later, with its URIs absolute.
public struct HistorySegment: Codable, Sendable, Equatable {
    /// The media sequence number.
    public var sequence: Int
    /// The discontinuity sequence number it belongs to.
    public var discontinuitySequence: Int
    /// `EXTINF` duration, seconds.
    public var duration: Double
    /// The segment's absolute URL.
    public var uri: String
    /// `EXT-X-BYTERANGE` as `length@offset`, offset explicit.
    public var byteRange: String?
    /// Whether `EXT-X-DISCONTINUITY` precedes it.
    public var discontinuity: Bool
    /// Whether `EXT-X-GAP` marks it.
    public var gap: Bool
    /// The `EXT-X-KEY` lines in force (absolute URIs); empty when none is.
    public var keys: [String]
    /// The `EXT-X-MAP` line in force (absolute URI).
    public var map: String?
    /// Its `EXT-X-PROGRAM-DATE-TIME`, stated or carried from an earlier one, Unix seconds.
    public var date: Double?
    /// When it was published, Unix seconds, as hlscache tells from the version it first saw it in: that version's
    /// time less the durations of the segments after it there, though not before the last version seen without it.
    public var seenAt: Double

    /// When it starts, for start-over: its date, else when it was first seen.
    public var startTime: Double { date ?? seenAt }
}

extension Playlist {
    /// The segments of a media playlist whose URIs are absolute (``rewritten(playlistURL:mapping:imports:limits:)``
    /// with an identity mapping), as the history keeps them; `seenAt` is `fetchedAt` for each (the caller estimates
    /// older ones).
    public func historySegments(fetchedAt: Double) -> [HistorySegment] {
        let segments = segments
        var result: [HistorySegment] = []
        result.reserveCapacity(segments.count)
        var keys: [String: String] = [:]
        var map: String?
        var date: Double?
        var discontinuitySequence = 0
        var next = 0
        var pendingDate: Double?
        for (index, line) in lines.enumerated() {
            guard next < segments.count else { break }
            if index == segments[next].line {
                let segment = segments[next]
                if segment.discontinuity { discontinuitySequence += 1 }
                if let pendingDate { date = pendingDate }
                pendingDate = nil
                result.append(
                    HistorySegment(
                        sequence: segment.sequenceNumber, discontinuitySequence: discontinuitySequence,
                        duration: segment.duration, uri: segment.uri,
                        byteRange: segment.byteRange.map { "\($0.length)@\($0.offset)" },
                        discontinuity: segment.discontinuity, gap: segment.isGap,
                        keys: keys.keys.sorted().compactMap { keys[$0] }, map: map, date: date, seenAt: fetchedAt))
                date = date.map { $0 + segment.duration }
                next += 1
                continue
            }
            guard case .tag(let name) = line.kind else { continue }
            switch name {
            case .discontinuitySequence:
                if case .discontinuitySequence(let value)? = line.tag { discontinuitySequence = value }
            case .key:
                guard case .key(let key)? = line.tag else { continue }
                if key.method.uppercased() == "NONE" {
                    keys = [:]
                } else {
                    keys[key.keyFormat ?? "identity"] = line.text.trimmingCharacters(in: .whitespaces)
                }
            case .map: map = line.text.trimmingCharacters(in: .whitespaces)
            case .programDateTime:
                if case .programDateTime(let text)? = line.tag, let stated = Self.date(text) {
                    pendingDate = stated.timeIntervalSince1970
                }
            default: break
            }
        }
        return result
    }
}
