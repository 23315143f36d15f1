import Foundation
import HLSPrefetch

/// Prints prefetch progress on standard error: on a terminal one line redrawn in place twice a second,
/// otherwise a plain line every 5 seconds; nothing with `--quiet`.
struct ProgressReporter: Sendable {
    let quiet: Bool
    let isTerminal = isatty(STDERR_FILENO) == 1
    let started = ContinuousClock.now

    /// Reports until cancelled.
    func report(_ prefetcher: Prefetcher) async {
        guard !quiet else { return }
        let interval: Duration = isTerminal ? .milliseconds(500) : .seconds(5)
        while !Task.isCancelled {
            do { try await Task.sleep(for: interval) } catch { break }
            write(ProgressLine.format(prefetcher.progress, seconds: elapsed), redraw: isTerminal)
        }
    }

    /// The last line: the totals.
    func finish(_ summary: PrefetchSummary) {
        if isTerminal && !quiet { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
        guard !quiet || summary.exitCode != 0 else { return }
        var line =
            "\(summary.fetched) fetched, \(summary.alreadyPresent) already stored, \(summary.failed) failed"
        if summary.skipped > 0 { line += ", \(summary.skipped) skipped" }
        line += " of \(summary.objects) objects in \(summary.playlists) playlists"
        line += String(format: "; %.1f MB in %.1f s", Double(summary.bytes) / 1e6, summary.seconds)
        error(line)
        for failure in summary.failures.prefix(20) { error("failed: \(failure.url): \(failure.reason)") }
        if summary.failures.count > 20 { error("… and \(summary.failures.count - 20) more failures") }
    }

    /// One line on standard error (clearing a progress line first).
    func error(_ line: String) {
        let prefix = isTerminal && !quiet ? "\r\u{1B}[2K" : ""
        FileHandle.standardError.write(Data((prefix + line + "\n").utf8))
    }

    private func write(_ line: String, redraw: Bool) {
        FileHandle.standardError.write(Data((redraw ? "\r\u{1B}[2K" + line : line + "\n").utf8))
    }

    private var elapsed: Double {
        let duration = ContinuousClock.now - started
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// Durations on the command line: `90` (seconds), `30s`, `10m`, `1h30m`, `500ms`.
enum DurationText {
    /// The longest duration accepted: about 31 years (its milliseconds fit in `Int64` many times over).
    static let maxSeconds: Double = 1e9

    /// - Returns: the duration, or `nil` when the text is not one (or longer than ``maxSeconds``).
    static func parse(_ text: String) -> Duration? {
        if let seconds = Double(text) {
            return seconds.isFinite && seconds >= 0 && seconds <= maxSeconds
                ? .milliseconds(Int64(seconds * 1000)) : nil
        }
        var total = Duration.zero
        var number = ""
        var rest = Substring(text.lowercased())
        guard !rest.isEmpty else { return nil }
        while let first = rest.first {
            if first.isNumber || first == "." {
                number.append(first)
                rest = rest.dropFirst()
                continue
            }
            guard let value = Double(number), value.isFinite, value <= maxSeconds else { return nil }
            let unit: Double
            if rest.hasPrefix("ms") {
                unit = 0.001
                rest = rest.dropFirst(2)
            } else {
                switch first {
                case "s": unit = 1
                case "m": unit = 60
                case "h": unit = 3600
                default: return nil
                }
                rest = rest.dropFirst()
            }
            total += .milliseconds(Int64(value * unit * 1000))
            guard total <= .seconds(maxSeconds) else { return nil }
            number = ""
        }
        return number.isEmpty ? total : nil
    }
}
