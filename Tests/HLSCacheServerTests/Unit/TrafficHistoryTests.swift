import Foundation
import HLSCacheTestTraits
import RequestHeads
import Testing

@testable import HLSCacheServer

/// The status page's figures: the hour's chart (``TrafficHistory``) and what each stream's players report by CMCD
/// (``StreamActivity``), without a server.
@Suite("Status page figures", .sharedMachine)
struct TrafficHistoryTests {
    @Test("each minute is the difference of its sample and the one before; an hour is kept; the chart draws them")
    func minutesFromSamples() {
        let history = TrafficHistory()
        let start = Date(timeIntervalSince1970: 6_000_000 * 60)
        #expect(TrafficHistory.chart(history.minutes()).contains("fills in minute by minute"))
        history.sample(.init(served: 1000, origin: 100, hits: 0, lookups: 0, starvations: 0), at: start)
        history.sample(.init(served: 5000, origin: 200, hits: 9, lookups: 10, starvations: 2), at: start + 61)
        // A later sample in the same minute replaces the earlier one.
        history.sample(.init(served: 3000, origin: 200, hits: 3, lookups: 4, starvations: 1), at: start + 70)
        history.sample(.init(served: 9000, origin: 250, hits: 19, lookups: 20, starvations: 1), at: start + 130)
        let minutes = history.minutes()
        #expect(minutes.count == 2)
        #expect(minutes[0] == .init(minute: 6_000_001, served: 2000, origin: 100, hitRatio: 0.75, starvations: 1))
        #expect(minutes[1] == .init(minute: 6_000_002, served: 6000, origin: 50, hitRatio: 1, starvations: 0))
        let chart = TrafficHistory.chart(minutes)
        #expect(chart.hasPrefix("<svg") && chart.hasSuffix("</svg>"))
        #expect(chart.components(separatedBy: "<polyline").count == 4)
        #expect(chart.contains("fill=\"#d33\""))
        // Past an hour, the oldest samples go.
        for minute in 3..<70 {
            history.sample(.init(served: 9000 + Int64(minute), origin: 250), at: start + Double(minute * 60))
        }
        #expect(history.minutes().count == 60)
    }

    @Test("a stream's row: its CMCD sessions, starvations per minute, median bitrate and buffer")
    func streamFigures() throws {
        let activity = StreamActivity()
        let now = Date()
        for (sid, bitrate, buffer, starved) in [
            ("a", 3000, 8000, false), ("a", 3000, 6000, true), ("b", 6000, 12000, false), ("c", 1500, 500, true),
        ] {
            let cmcd = try CMCD(headers: "sid=\"\(sid)\",br=\(bitrate),bl=\(buffer)" + (starved ? ",bs" : ""))
            activity.record(stream: "https://cdn.example/live.m3u8", bytes: 100, cmcd: cmcd, at: now)
        }
        activity.record(stream: "https://cdn.example/other.m3u8", bytes: 100, at: now)
        let rows = activity.busiest(at: now)
        #expect(rows.count == 2)
        #expect(rows[0].sessions == 3)
        #expect(rows[0].starvationsPerMinute == 2)
        #expect(rows[0].medianBitrate == 3000)
        #expect(rows[0].medianBuffer == 8000)
        #expect(rows[1].sessions == 0 && rows[1].medianBitrate == nil)
    }
}
