import Foundation
import OriginCache
import OriginClient
import SegmentCache

/// `GET /`: a small HTML page a person can read: version, uptime, cache size and entries, hit ratio, bytes
/// from origins against bytes served, a chart of the last hour drawn here as inline SVG (``TrafficHistory``: bytes
/// served against bytes from origins per minute, hit ratio, starvations), and the busiest streams of the last five
/// minutes with what their players report by CMCD (sessions, starvations per minute, median bitrate and buffer), each
/// linked to the ``PlayerPage`` that plays it (unless its URL carries a secret).
enum StatusPage {
    static func render(components: ServerComponents) -> String {
        let statistics = components.cache.statistics
        let lookups = statistics.hits + statistics.misses
        let hitRatio = lookups == 0 ? "–" : String(format: "%.1f %%", Double(statistics.hits) * 100 / Double(lookups))
        let uptime = Int(Date().timeIntervalSince(components.observability.startedAt))
        let served = components.metrics.servedBytesTotal
        let origin = statistics.originBytes
        let saved = served > origin ? served - origin : 0
        var rows = ""
        for row in components.observability.activity.busiest() {
            let stream = escape(SecretRedaction.redact(row.stream))
            let play = PlayerPage.link(forStream: row.stream).map { "<a href=\"\(escape($0))\">play</a>" } ?? ""
            let qoe =
                row.sessions == 0 && row.medianBitrate == nil
                ? "<td>–</td><td>–</td><td>–</td><td>–</td>"
                : "<td>\(row.sessions)</td><td>\(String(format: "%.1f", row.starvationsPerMinute))</td>"
                    + "<td>\(row.medianBitrate.map { "\($0) kbit/s" } ?? "–")</td>"
                    + "<td>\(row.medianBuffer.map { String(format: "%.1f s", Double($0) / 1000) } ?? "–")</td>"
            rows +=
                "<tr><td>\(stream)</td><td>\(row.requests)</td><td>\(bytes(row.bytes))</td>\(qoe)<td>\(play)</td></tr>\n"
        }
        if rows.isEmpty { rows = "<tr><td colspan=\"8\">no requests in the last 5 minutes</td></tr>\n" }
        let history = components.observability.history
        history.sample(TrafficHistoryService.totals(components))
        let chart = TrafficHistory.chart(history.minutes())
        let configuration = components.configuration
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>hlscache</title>
            <meta http-equiv="refresh" content="10">
            <style>body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}td,th{padding:.2em .8em;text-align:left}
            th{background:#eee}table{border-collapse:collapse}</style></head><body>
            <h1>hlscache \(hlscacheVersion)</h1>
            <table>
            <tr><th>Uptime</th><td>\(uptime / 3600) h \(uptime / 60 % 60) min \(uptime % 60) s</td></tr>
            <tr><th>Mode</th><td>\(configuration.reverseOrigin.map { "reverse proxy for " + escape(SecretRedaction.redact($0)) } ?? "forward proxy (/o/&lt;scheme&gt;/&lt;host&gt;/&lt;path&gt;)")</td></tr>
            <tr><th>Cache</th><td>\(escape(configuration.cacheDirectory)): \(bytes(statistics.bytes)) of \(bytes(configuration.fill.maxCacheBytes)), \(statistics.entries) entries</td></tr>
            <tr><th>Hit ratio</th><td>\(hitRatio) (\(statistics.hits) hits, \(statistics.misses) misses, \(statistics.deduplicatedFills) fills shared)</td></tr>
            <tr><th>From origins</th><td>\(bytes(origin)) in \(statistics.originFetches) fetches</td></tr>
            <tr><th>Served</th><td>\(bytes(served)) (saved \(bytes(saved)))</td></tr>
            <tr><th>Disk errors</th><td>\(statistics.diskErrors)</td></tr>
            </table>
            <h2>Last hour</h2>
            \(chart)
            <h2>Busiest streams, last 5 minutes</h2>
            <table><tr><th>Stream</th><th>Requests</th><th>Served</th><th>Sessions (CMCD)</th><th>Starvations/min</th>
            <th>Median bitrate</th><th>Median buffer</th><th>Player</th></tr>
            \(rows)</table>
            <p><a href="/metrics">/metrics</a> · <a href="/healthz">/healthz</a></p>
            </body></html>

            """
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
