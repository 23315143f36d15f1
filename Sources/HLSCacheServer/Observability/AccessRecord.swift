import Foundation
import Logging

/// One answered request as the access log and the request metrics see it, whichever path answered it.
struct AccessRecord: Sendable {
    /// `GET`, `HEAD`, …
    var method: String
    /// The request target.
    var path: String
    /// The `X-Request-Id`.
    var id: String
    /// When the request arrived.
    var start: ContinuousClock.Instant
    /// What was asked for.
    var kind: RequestKind = .other
    /// The stream (playlist URL) the request belongs to, for the status page.
    var stream: String?
    /// The origin URL the request maps to, once known.
    var originURL: String?
    /// What the CORS policy grants the request's page, applied to whatever answer it gets.
    var cors: CORSPolicy.Grant = .none

    /// The access-log line's fields, keys in the order the log handler sorts metadata keys (so that the line is
    /// the same whether it goes through swift-log or straight to the output).
    func logFields(
        status: Int, bytes: Int64, result: CacheResult, milliseconds: Double
    ) -> [(key: String, value: String)] {
        // Tenths of a millisecond, as "%.1f" writes them, without a formatter.
        let tenths = Int((milliseconds * 10).rounded())
        return [
            ("bytes", String(max(0, bytes))),
            ("cache", result.header),
            ("id", id),
            ("method", method),
            ("ms", String(tenths / 10) + "." + String(tenths % 10)),
            ("path", path),
            ("status", String(status)),
        ]
    }

    /// Writes the access-log line and counts the request.
    /// - Parameters:
    ///   - status: the status code sent.
    ///   - bytes: body bytes sent; negative when the response was aborted.
    ///   - result: how the cache served it.
    ///   - aborted: why the response was cut short, if it was.
    ///   - components: where the metrics, activity and logger are.
    func finish(
        status: Int, bytes: Int64, result: CacheResult, aborted: (any Error)?, components: ServerComponents
    ) {
        let elapsed = ContinuousClock.now - start
        components.metrics.request(kind: kind, result: aborted == nil ? result : .error, duration: elapsed)
        if bytes > 0 {
            components.metrics.served(bytes: bytes)
            if let stream { components.observability.activity.record(stream: stream, bytes: bytes) }
        }
        let level: Logger.Level = aborted == nil ? .info : .warning
        guard components.logger.logLevel <= level else { return }
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        let fields = logFields(status: status, bytes: bytes, result: result, milliseconds: milliseconds)
        if aborted == nil, components.observability.writesAccessLinesDirectly {
            LineLogHandler.queueInfoLine(message: "request", fields: fields)
            return
        }
        var metadata = Logger.Metadata(uniqueKeysWithValues: fields.map { ($0.key, .string($0.value)) })
        if let aborted {
            metadata["error"] = "response aborted: \(aborted)"
            if let originURL { metadata["url"] = "\(originURL)" }
            components.logger.warning("request", metadata: metadata)
        } else {
            components.logger.info("request", metadata: metadata)
        }
    }
}
