import Foundation
import RequestHeads
import Synchronization

/// Requests and bytes per stream over the last minutes, for the status page's "busiest streams".
///
/// A stream is named by the playlist URL a request belongs to (the playlist itself, or the media playlist
/// a segment was listed in). Counts are kept per minute; minutes older than the window are dropped. With what its
/// players report by CMCD: their sessions, buffer starvations, bitrates and buffer lengths, each bounded per stream
/// and minute.
final class StreamActivity: Sendable {
    struct Figures: Sendable, Hashable {
        var requests = 0
        var bytes: Int64 = 0
        /// The CMCD sessions seen (hashes of `sid`, at most ``maxSamples``).
        var sessions: Set<UInt64> = []
        /// CMCD requests that reported a buffer starvation (`bs`).
        var starvations = 0
        /// CMCD `br` (kbit/s) and `bl` (ms) values, the first ``maxSamples`` of the minute.
        var bitrates: [Int64] = []
        var buffers: [Int64] = []
    }

    /// One row of the busiest-streams table.
    struct Row: Sendable, Hashable {
        var stream: String
        var requests: Int
        var bytes: Int64
        /// Distinct CMCD sessions in the window (at most ``maxSamples`` a minute counted).
        var sessions = 0
        /// CMCD buffer starvations per minute, over the window.
        var starvationsPerMinute = 0.0
        /// The median CMCD bitrate (kbit/s) and buffer length (ms) reported, if any was.
        var medianBitrate: Int64?
        var medianBuffer: Int64?
    }

    /// The most sessions, bitrates and buffer lengths kept per stream and minute.
    static let maxSamples = 256

    private let windowMinutes: Int
    private let maxStreamsPerMinute = 1000
    private let buckets = Mutex<[(minute: Int, streams: [String: Figures])]>([])

    init(windowMinutes: Int = 5) {
        self.windowMinutes = windowMinutes
    }

    /// Records one request of `stream` that sent `bytes`, with what its player reported by CMCD, if it did.
    func record(stream: String, bytes: Int64, cmcd: CMCD? = nil, at date: Date = Date()) {
        let minute = Int(date.timeIntervalSince1970 / 60)
        buckets.withLock { buckets in
            if buckets.last?.minute != minute {
                buckets.append((minute, [:]))
                buckets.removeAll { $0.minute <= minute - windowMinutes }
            }
            let index = buckets.count - 1
            // One hash of the stream's URL per request: it is recorded for every answer.
            if let known = buckets[index].streams.index(forKey: stream) {
                buckets[index].streams.values[known].requests += 1
                buckets[index].streams.values[known].bytes += bytes
                if let cmcd { Self.add(cmcd, to: &buckets[index].streams.values[known]) }
            } else if buckets[index].streams.count < maxStreamsPerMinute {
                var figures = Figures(requests: 1, bytes: bytes)
                if let cmcd { Self.add(cmcd, to: &figures) }
                buckets[index].streams[stream] = figures
            }
        }
    }

    private static func add(_ cmcd: CMCD, to figures: inout Figures) {
        if let sid = cmcd.string("sid"), figures.sessions.count < maxSamples {
            figures.sessions.insert(SessionSketch.hash(sid))
        }
        if cmcd.flag("bs") { figures.starvations += 1 }
        if let bitrate = cmcd.integer("br"), bitrate >= 0, figures.bitrates.count < maxSamples {
            figures.bitrates.append(bitrate)
        }
        if let buffer = cmcd.integer("bl"), buffer >= 0, figures.buffers.count < maxSamples {
            figures.buffers.append(buffer)
        }
    }

    /// The `limit` streams with the most requests in the window, busiest first.
    func busiest(limit: Int = 10, at date: Date = Date()) -> [Row] {
        let minute = Int(date.timeIntervalSince1970 / 60)
        var totals: [String: Figures] = [:]
        var minutes = 1
        buckets.withLock { buckets in
            for bucket in buckets where bucket.minute > minute - windowMinutes {
                minutes = max(minutes, minute - bucket.minute + 1)
                for (stream, figures) in bucket.streams {
                    totals[stream, default: Figures()].requests += figures.requests
                    totals[stream, default: Figures()].bytes += figures.bytes
                    totals[stream, default: Figures()].sessions.formUnion(figures.sessions)
                    totals[stream, default: Figures()].starvations += figures.starvations
                    totals[stream, default: Figures()].bitrates += figures.bitrates
                    totals[stream, default: Figures()].buffers += figures.buffers
                }
            }
        }
        return totals.map { stream, figures in
            Row(
                stream: stream, requests: figures.requests, bytes: figures.bytes, sessions: figures.sessions.count,
                starvationsPerMinute: Double(figures.starvations) / Double(minutes),
                medianBitrate: Self.median(figures.bitrates), medianBuffer: Self.median(figures.buffers))
        }
        .sorted { ($0.requests, $0.bytes, $1.stream) > ($1.requests, $1.bytes, $0.stream) }
        .prefix(limit).map { $0 }
    }

    private static func median(_ values: [Int64]) -> Int64? {
        guard !values.isEmpty else { return nil }
        return values.sorted()[values.count / 2]
    }
}
