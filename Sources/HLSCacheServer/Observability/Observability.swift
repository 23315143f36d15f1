import Foundation
import Logging
import Synchronization

/// What the server says about itself: the log, the metrics, the busiest streams, its start time and the ids that
/// tie a response to its access-log line.
final class Observability: Sendable {
    /// The server's logger.
    let logger: Logger
    /// The Prometheus metrics.
    let metrics: ServerMetrics
    /// Bytes served per stream, for the status page.
    let activity = StreamActivity()
    /// The last hour, minute by minute, for the status page's chart.
    let history = TrafficHistory()
    /// When the server started.
    let startedAt = Date()
    private let requestCounter = Atomic<Int>(0)
    /// The random prefix of this process's request ids, with the dash before the counter.
    private let requestPrefix = String(UInt32.random(in: 0...UInt32.max), radix: 16) + "-"

    /// Whether access-log lines go straight to the log's output (``AccessRecord/appendAccessLine(status:bytes:result:milliseconds:timestamp:to:)``)
    /// rather than through swift-log's metadata: when the logger's handler is hlscache's own, writing text, it is the
    /// same line for less work per request.
    let writesAccessLinesDirectly: Bool
    /// Where access lines written directly go: the output of the logger's handler.
    let directOutput: LogOutput

    init(logger: Logger, metrics: ServerMetrics) {
        self.logger = logger
        self.metrics = metrics
        let handler = logger.handler as? LineLogHandler
        writesAccessLinesDirectly = handler?.writesInfoLinesDirectly ?? false
        directOutput = handler?.output ?? .standardOutput
    }

    /// A new request id: this process's random prefix and a counter.
    func nextRequestID() -> String {
        // Appended rather than interpolated: an id of up to 15 bytes stays a small string, with no allocation.
        var id = requestPrefix
        id += String(requestCounter.add(1, ordering: .relaxed).newValue)
        return id
    }
}
