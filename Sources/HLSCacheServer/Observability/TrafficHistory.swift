import Foundation
import SegmentCache
import ServiceLifecycle
import Synchronization

/// The last hour, minute by minute, for the status page's chart: bytes served against bytes from origins, the hit
/// ratio, and the buffer starvations players reported (CMCD `bs`). The server's running totals are sampled (every
/// 10 s, by ``TrafficHistoryService``, and when the page is drawn), the last sample of each minute kept, at most 61;
/// a minute's figures are the differences between its sample and the one before.
final class TrafficHistory: Sendable {
    /// The running totals a sample holds.
    struct Totals: Sendable, Equatable {
        var served: Int64 = 0
        var origin: Int64 = 0
        var hits = 0
        var lookups = 0
        var starvations = 0
    }

    /// One minute's figures.
    struct Minute: Sendable, Equatable {
        /// Minutes since the epoch.
        var minute: Int
        var served: Int64
        var origin: Int64
        /// Hits over lookups, when there were lookups.
        var hitRatio: Double?
        var starvations: Int
    }

    private let samples = Mutex<[(minute: Int, totals: Totals)]>([])

    /// Keeps `totals` as the sample of `date`'s minute.
    func sample(_ totals: Totals, at date: Date = Date()) {
        let minute = Int(date.timeIntervalSince1970 / 60)
        samples.withLock { samples in
            if samples.last?.minute == minute {
                samples[samples.count - 1].totals = totals
            } else {
                samples.append((minute, totals))
                samples.removeAll { $0.minute < minute - 60 }
            }
        }
    }

    /// The minutes of the last hour that have a sample before them, oldest first.
    func minutes() -> [Minute] {
        let samples = samples.withLock { $0 }
        return zip(samples, samples.dropFirst()).map { before, after in
            let lookups = after.totals.lookups - before.totals.lookups
            return Minute(
                minute: after.minute, served: max(0, after.totals.served - before.totals.served),
                origin: max(0, after.totals.origin - before.totals.origin),
                hitRatio: lookups > 0 ? Double(after.totals.hits - before.totals.hits) / Double(lookups) : nil,
                starvations: max(0, after.totals.starvations - before.totals.starvations))
        }
    }

    /// The chart of `minutes` as inline SVG (no script): bytes served (blue) and from origins (orange) on one scale,
    /// the hit ratio (green, 0 to 100 %), starvations as red bars along the bottom.
    static func chart(_ minutes: [Minute]) -> String {
        guard let last = minutes.last?.minute, minutes.count >= 1 else {
            return "<p>The chart of the last hour fills in minute by minute.</p>"
        }
        let width = 600.0
        let height = 160.0
        let step = width / 60
        func x(_ minute: Int) -> Double { width - Double(last - minute) * step }
        let most = Double(max(1, minutes.map { max($0.served, $0.origin) }.max() ?? 1))
        let mostStarvations = Double(max(1, minutes.map(\.starvations).max() ?? 1))
        func line(_ values: [(Int, Double)], color: String) -> String {
            let points = values.map { String(format: "%.1f,%.1f", x($0.0), height - $0.1 * (height - 10)) }
            return "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\" points=\""
                + points.joined(separator: " ") + "\"/>"
        }
        var svg =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(Int(width)) \(Int(height) + 20)\" "
            + "width=\"\(Int(width))\" height=\"\(Int(height) + 20)\" role=\"img\" "
            + "aria-label=\"bytes served and from origins, hit ratio and starvations per minute, last hour\">"
            + "<rect width=\"\(Int(width))\" height=\"\(Int(height))\" fill=\"#fafafa\" stroke=\"#ddd\"/>"
        for minute in minutes where minute.starvations > 0 {
            let barHeight = Double(minute.starvations) / mostStarvations * 30
            svg += String(
                format: "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#d33\"/>",
                x(minute.minute) - step / 2, height - barHeight, step * 0.8, barHeight)
        }
        svg += line(minutes.map { ($0.minute, Double($0.served) / most) }, color: "#36c")
        svg += line(minutes.map { ($0.minute, Double($0.origin) / most) }, color: "#e80")
        svg += line(minutes.compactMap { minute in minute.hitRatio.map { (minute.minute, $0) } }, color: "#2a2")
        svg +=
            "<text x=\"4\" y=\"\(Int(height) + 15)\" font-size=\"11\">"
            + "<tspan fill=\"#36c\">served</tspan> · <tspan fill=\"#e80\">from origins</tspan> (top: "
            + StatusPage.bytes(Int64(most)) + "/min) · <tspan fill=\"#2a2\">hit ratio</tspan> (top: 100 %) · "
            + "<tspan fill=\"#d33\">starvations</tspan> (top: \(Int(mostStarvations))/min) · last 60 min</text></svg>"
        return svg
    }
}

/// Samples the server's running totals into its ``TrafficHistory`` every 10 s.
struct TrafficHistoryService: Service {
    let components: ServerComponents

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                components.observability.history.sample(Self.totals(components))
                try? await Task.sleep(for: .seconds(10))
            }
        }
    }

    /// The running totals now.
    static func totals(_ components: ServerComponents) -> TrafficHistory.Totals {
        let statistics = components.cache.statistics
        return TrafficHistory.Totals(
            served: components.metrics.servedBytesTotal, origin: statistics.originBytes, hits: statistics.hits,
            lookups: statistics.hits + statistics.misses, starvations: components.metrics.cmcd.starvationsTotal)
    }
}
