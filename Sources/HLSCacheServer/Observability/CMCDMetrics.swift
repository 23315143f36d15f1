import CoreMetrics
import Foundation
import Prometheus
import RequestHeads
import Synchronization

/// What players report with CMCD (CTA-5004), counted with bounded labels: no session id or URL is ever a label.
///
/// - `hlscache_cmcd_requests_total{ot,sf,st}`: requests by object type, streaming format and stream type (values
///   outside the spec's lists count as `other`, an absent key as `none`);
/// - `hlscache_cmcd_buffer_starvation_total` (`bs`), `hlscache_cmcd_startup_requests_total` (`su`);
/// - histograms `hlscache_cmcd_buffer_length_ms` (`bl`), `hlscache_cmcd_bitrate_kbps` (`br`),
///   `hlscache_cmcd_throughput_kbps` (`mtp`);
/// - `hlscache_cmcd_sessions`: distinct `sid` seen in the last 60 s (``SessionSketch``);
/// - `hlscache_cmcd_invalid_total`: fields ignored (too long, too many keys, a duplicate key, bad syntax);
/// - `hlscache_cmcd_prefetch_total{result}`: `nor` prefetches queued, or why not (``CMCDPrefetch``).
final class CMCDMetrics: Sendable {
    private let factory: PrometheusMetricsFactory
    /// `hlscache_cmcd_requests_total`, made when first counted, at ``requestIndex(_:)``.
    private let requests = Mutex<[CoreMetrics.Counter?]>(
        Array(repeating: nil, count: (objectTypes.count + 2) * (formats.count + 2) * (streamTypes.count + 2)))
    private let starvation: CoreMetrics.Counter
    private let startup: CoreMetrics.Counter
    private let invalid: CoreMetrics.Counter
    private let bufferLength = CountingHistogram(
        name: "hlscache_cmcd_buffer_length_ms", help: "Buffer length players report (CMCD bl), in milliseconds",
        bounds: [500, 1000, 2000, 4000, 8000, 15000, 30000, 60000])
    private let bitrate = CountingHistogram(
        name: "hlscache_cmcd_bitrate_kbps", help: "Encoded bitrate of the objects players ask for (CMCD br), in kbit/s",
        bounds: [300, 750, 1500, 3000, 6000, 12000, 25000])
    private let throughput = CountingHistogram(
        name: "hlscache_cmcd_throughput_kbps", help: "Throughput players measure (CMCD mtp), in kbit/s",
        bounds: [500, 1000, 2500, 5000, 10000, 25000, 50000, 100000])
    private let sessionsGauge: CoreMetrics.Gauge
    /// In ``CMCDPrefetch/Result/allCases``' order.
    private let prefetches: [CoreMetrics.Counter]
    /// The distinct sessions of the last minute.
    let sessions = SessionSketch()
    private let starvations = Atomic<Int>(0)

    /// Buffer starvations reported since start (`bs`).
    var starvationsTotal: Int { starvations.load(ordering: .relaxed) }

    /// The values CTA-5004 lists for `ot`, `sf` and `st`: anything else is `other`.
    private static let objectTypes = ["m", "a", "v", "av", "i", "c", "tt", "k", "o"]
    private static let formats = ["d", "h", "s", "o"]
    private static let streamTypes = ["v", "l"]

    init(factory: PrometheusMetricsFactory) {
        self.factory = factory
        starvation = CoreMetrics.Counter(label: "hlscache_cmcd_buffer_starvation_total", factory: factory)
        startup = CoreMetrics.Counter(label: "hlscache_cmcd_startup_requests_total", factory: factory)
        invalid = CoreMetrics.Counter(label: "hlscache_cmcd_invalid_total", factory: factory)
        sessionsGauge = CoreMetrics.Gauge(label: "hlscache_cmcd_sessions", factory: factory)
        prefetches = CMCDPrefetch.Result.allCases.map { result in
            CoreMetrics.Counter(
                label: "hlscache_cmcd_prefetch_total", dimensions: [("result", result.rawValue)], factory: factory)
        }
    }

    /// Counts one request's report.
    func count(_ report: CMCDReport, at now: ContinuousClock.Instant = .now) {
        guard case .success(let cmcd) = report.data else {
            invalid.increment()
            return
        }
        let labels = (
            Self.label(cmcd.value("ot"), in: Self.objectTypes, codes: Self.objectTypeCodes),
            Self.label(cmcd.value("sf"), in: Self.formats, codes: Self.formatCodes),
            Self.label(cmcd.value("st"), in: Self.streamTypes, codes: Self.streamTypeCodes)
        )
        let index =
            (labels.0.index * (Self.formats.count + 2) + labels.1.index) * (Self.streamTypes.count + 2) + labels.2.index
        let counter = requests.withLock { counters in
            if let counter = counters[index] { return counter }
            let counter = CoreMetrics.Counter(
                label: "hlscache_cmcd_requests_total",
                dimensions: [("ot", labels.0.name), ("sf", labels.1.name), ("st", labels.2.name)], factory: factory)
            counters[index] = counter
            return counter
        }
        counter.increment()
        if cmcd.flag("bs") {
            starvation.increment()
            starvations.add(1, ordering: .relaxed)
        }
        if cmcd.flag("su") { startup.increment() }
        if let value = cmcd.integer("bl") { bufferLength.record(value) }
        if let value = cmcd.integer("br") { bitrate.record(value) }
        if let value = cmcd.integer("mtp") { throughput.record(value) }
        if let sid = cmcd.string("sid") { sessions.note(sid, at: now) }
    }

    /// Counts a `nor` prefetch's result.
    func prefetch(_ result: CMCDPrefetch.Result) {
        prefetches[result.index].increment()
    }

    /// Appends the histograms of `bl`, `br` and `mtp` (counted without the registry: ``CountingHistogram``).
    func renderHistograms(into output: inout [UInt8]) {
        for histogram in [bufferLength, bitrate, throughput] { histogram.render(into: &output) }
    }

    /// Brings `hlscache_cmcd_sessions` up to date (before the metrics are rendered).
    func refresh(at now: ContinuousClock.Instant = .now) {
        sessionsGauge.record(sessions.estimate(at: now))
    }

    /// The label of a token value, and its place: a known value's in `known`, then `other` (another value, or not
    /// a token), then `none` (absent). Told apart by their bytes as numbers (``CMCD/code(of:)``): no string compared.
    private static func label(
        _ value: CMCD.Value?, in known: [String], codes: [UInt64]
    ) -> (name: String, index: Int) {
        guard let value else { return ("none", known.count + 1) }
        guard case .token(let token) = value, case let code = CMCD.code(of: token), code != 0,
            let index = codes.firstIndex(of: code)
        else { return ("other", known.count) }
        return (known[index], index)
    }

    private static let objectTypeCodes = objectTypes.map { CMCD.code(of: $0) }
    private static let formatCodes = formats.map { CMCD.code(of: $0) }
    private static let streamTypeCodes = streamTypes.map { CMCD.code(of: $0) }
}

/// How many distinct session ids were seen in the last 60 s, counted in fixed memory (linear counting over two
/// bitmaps of 30 s each, 8 KiB in all): whatever the number of sessions, or a player sending a new id with every
/// request, it holds no id. Accurate to a few per cent up to about ten thousand sessions, and saturating at about
/// 85,000.
final class SessionSketch: Sendable {
    private static let bits = 1 << 15
    private static let window: Duration = .seconds(30)

    private struct State {
        var current = [UInt64](repeating: 0, count: SessionSketch.bits / 64)
        var previous = [UInt64](repeating: 0, count: SessionSketch.bits / 64)
        var currentStart: ContinuousClock.Instant
    }

    private let state: Mutex<State>

    init(now: ContinuousClock.Instant = .now) {
        state = Mutex(State(currentStart: now))
    }

    /// Notes a session id seen now.
    func note(_ sid: String, at now: ContinuousClock.Instant) {
        let bit = Int(Self.hash(sid) % UInt64(Self.bits))
        state.withLock { state in
            Self.rotate(&state, now: now)
            state.current[bit / 64] |= 1 << UInt64(bit % 64)
        }
    }

    /// The estimated number of distinct ids seen in the last 60 s (between 30 and 60 s, as the windows turn).
    func estimate(at now: ContinuousClock.Instant) -> Int {
        state.withLock { state in
            Self.rotate(&state, now: now)
            var zeros = 0
            for index in 0..<state.current.count {
                zeros += 64 - (state.current[index] | state.previous[index]).nonzeroBitCount
            }
            let size = Double(Self.bits)
            guard zeros > 0 else { return Int(size * log(size)) }
            return Int((-size * log(Double(zeros) / size)).rounded())
        }
    }

    private static func rotate(_ state: inout State, now: ContinuousClock.Instant) {
        let elapsed = now - state.currentStart
        guard elapsed >= window else { return }
        if elapsed >= window * 2 {
            state.previous = [UInt64](repeating: 0, count: bits / 64)
            state.current = [UInt64](repeating: 0, count: bits / 64)
            state.currentStart = now
        } else {
            state.previous = state.current
            state.current = [UInt64](repeating: 0, count: bits / 64)
            state.currentStart = state.currentStart + window
        }
    }

    /// FNV-1a, 64 bits: the same id always lands on the same bit (Swift's `Hasher` is seeded per process).
    static func hash(_ text: String) -> UInt64 {
        var text = text
        return text.withUTF8 { bytes in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for index in 0..<bytes.count {
                hash = (hash ^ UInt64(bytes[index])) &* 0x100_0000_01b3
            }
            return hash
        }
    }
}
