import Synchronization

/// A Prometheus histogram of whole-number observations counted with atomics, no lock: a CMCD player's every request
/// records three (`bl`, `br`, `mtp`), and swift-prometheus' histograms take a lock for each. Rendered in the text
/// format by ``render(into:)``, after the registry's metrics.
final class CountingHistogram: Sendable {
    /// One bucket's observations (not cumulative), or the sum's.
    private final class Cell: Sendable {
        let value = Atomic<Int>(0)
    }

    private let name: String
    private let help: String
    /// The buckets' upper bounds, ascending; the last bucket (`+Inf`) has none.
    private let bounds: [Int64]
    /// One cell a bound, then `+Inf`'s.
    private let buckets: [Cell]
    private let sum = Cell()

    /// - Parameters:
    ///   - name: the metric's name (`hlscache_…`), its series `_bucket`, `_sum` and `_count`.
    ///   - help: its `# HELP` text.
    ///   - bounds: the buckets' upper bounds, ascending.
    init(name: String, help: String, bounds: [Int64]) {
        self.name = name
        self.help = help
        self.bounds = bounds
        buckets = (0...bounds.count).map { _ in Cell() }
    }

    /// Counts one observation (a negative one is not counted: callers pass what players report, checked).
    func record(_ value: Int64) {
        guard value >= 0 else { return }
        var index = 0
        while index < bounds.count, value > bounds[index] { index += 1 }
        buckets[index].value.add(1, ordering: .relaxed)
        sum.value.add(Int(clamping: value), ordering: .relaxed)
    }

    /// The number of observations.
    var count: Int { buckets.reduce(0) { $0 + $1.value.load(ordering: .relaxed) } }

    /// Appends the histogram in Prometheus' text format: `# HELP`, `# TYPE`, the cumulative buckets, `_sum`,
    /// `_count`.
    func render(into output: inout [UInt8]) {
        var text = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        var cumulative = 0
        for (index, bucket) in buckets.enumerated() {
            cumulative += bucket.value.load(ordering: .relaxed)
            let bound = index < bounds.count ? "\(bounds[index]).0" : "+Inf"
            text += "\(name)_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        text += "\(name)_sum \(sum.value.load(ordering: .relaxed)).0\n\(name)_count \(cumulative)\n"
        output.append(contentsOf: text.utf8)
    }
}
