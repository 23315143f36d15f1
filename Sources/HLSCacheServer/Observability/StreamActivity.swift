import Foundation
import Synchronization

/// Requests and bytes per stream over the last minutes, for the status page's "busiest streams".
///
/// A stream is named by the playlist URL a request belongs to (the playlist itself, or the media playlist
/// a segment was listed in). Counts are kept per minute; minutes older than the window are dropped.
final class StreamActivity: Sendable {
    struct Figures: Sendable, Hashable {
        var requests = 0
        var bytes: Int64 = 0
    }

    /// One row of the busiest-streams table.
    struct Row: Sendable, Hashable {
        var stream: String
        var requests: Int
        var bytes: Int64
    }

    private let windowMinutes: Int
    private let maxStreamsPerMinute = 1000
    private let buckets = Mutex<[(minute: Int, streams: [String: Figures])]>([])

    init(windowMinutes: Int = 5) {
        self.windowMinutes = windowMinutes
    }

    /// Records one request of `stream` that sent `bytes`.
    func record(stream: String, bytes: Int64, at date: Date = Date()) {
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
            } else if buckets[index].streams.count < maxStreamsPerMinute {
                buckets[index].streams[stream] = Figures(requests: 1, bytes: bytes)
            }
        }
    }

    /// The `limit` streams with the most requests in the window, busiest first.
    func busiest(limit: Int = 10, at date: Date = Date()) -> [Row] {
        let minute = Int(date.timeIntervalSince1970 / 60)
        var totals: [String: Figures] = [:]
        buckets.withLock { buckets in
            for bucket in buckets where bucket.minute > minute - windowMinutes {
                for (stream, figures) in bucket.streams {
                    totals[stream, default: Figures()].requests += figures.requests
                    totals[stream, default: Figures()].bytes += figures.bytes
                }
            }
        }
        return totals.map { Row(stream: $0.key, requests: $0.value.requests, bytes: $0.value.bytes) }
            .sorted { ($0.requests, $0.bytes, $1.stream) > ($1.requests, $1.bytes, $0.stream) }
            .prefix(limit).map { $0 }
    }
}
