import Foundation

/// The one-line progress report: `objects 12/60 · 3.4 MB · 1.2 MB/s · ETA 0:05 · 0 failed`.
public enum ProgressLine {
    /// Formats `progress` after `seconds` of running.
    /// - Parameter live: whether a live stream is being followed (no ETA then: the total grows).
    public static func format(_ progress: PrefetchProgress, seconds: Double, live: Bool = false) -> String {
        let rate = seconds > 0 ? Double(progress.bytes) / seconds : 0
        var parts = [
            "objects \(progress.finished)/\(progress.total)", bytes(Double(progress.bytes)), bytes(rate) + "/s",
        ]
        let remaining = progress.total - progress.finished
        if live {
            parts.append("live, \(clock(seconds)) recorded")
        } else if progress.finished > 0, remaining > 0 {
            parts.append("ETA " + clock(seconds / Double(progress.finished) * Double(remaining)))
        }
        parts.append("\(progress.failed) failed")
        return parts.joined(separator: " · ")
    }

    static func bytes(_ value: Double) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var scaled = value
        var unit = 0
        while scaled >= 1000 && unit < units.count - 1 {
            scaled /= 1000
            unit += 1
        }
        return unit == 0 ? "\(Int(scaled)) B" : String(format: "%.1f %@", scaled, units[unit])
    }

    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        return total >= 3600
            ? String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
            : String(format: "%d:%02d", total / 60, total % 60)
    }
}
