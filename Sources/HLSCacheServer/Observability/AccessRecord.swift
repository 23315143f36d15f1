import Foundation
import Logging
import RequestHeads

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
    /// What the player reported with CMCD, when it could be read: its session, bitrate, buffer and starvation are
    /// logged (`cmcd_sid`, `cmcd_br`, `cmcd_bl`, `cmcd_bs`, each when present).
    var cmcd: CMCD?
    /// The HTTP version it came in (`proto`).
    var wireProtocol: WireProtocol = .http11

    /// The CMCD fields of the access log, in key order: the member's value as text (a string's without quotes).
    var cmcdFields: [(key: String, value: String)] {
        guard let cmcd else { return [] }
        var fields: [(key: String, value: String)] = []
        if let value = cmcd.integer("bl") { fields.append(("cmcd_bl", String(value))) }
        if let value = cmcd.integer("br") { fields.append(("cmcd_br", String(value))) }
        if case .boolean(let value) = cmcd["bs"] { fields.append(("cmcd_bs", value ? "true" : "false")) }
        if let value = cmcd.string("sid") { fields.append(("cmcd_sid", value)) }
        return fields
    }

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
        ] + cmcdFields + [
            ("id", id),
            ("method", method),
            ("ms", String(tenths / 10) + "." + String(tenths % 10)),
            ("path", path),
            ("proto", wireProtocol.rawValue),
            ("status", String(status)),
        ]
    }

    /// The line ``LineLogHandler/infoLine(timestamp:message:fields:)`` makes of ``logFields(status:bytes:result:milliseconds:)``
    /// (message `request`), newline included, written straight into `line`: no field strings, numbers as digits,
    /// only the fields a client or an origin can put text in redacted. One per request when the text format writes
    /// directly; a test holds the two lines equal.
    /// - Parameter timestamp: the timestamp; `nil` for now.
    func appendAccessLine(
        status: Int, bytes: Int64, result: CacheResult, milliseconds: Double, timestamp: String? = nil,
        to line: inout [UInt8]
    ) {
        if let timestamp { line.append(contentsOf: timestamp.utf8) } else { LogTimestamp.append(to: &line) }
        line.append(contentsOf: " info request bytes=".utf8)
        line.appendDecimal(Int(clamping: max(0, bytes)))
        line.append(contentsOf: " cache=".utf8)
        line.append(contentsOf: result.header.utf8)
        for (key, value) in cmcdFields {
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: key.utf8)
            line.append(UInt8(ascii: "="))
            LineLogHandler.appendRedactedTextValue(value, to: &line)
        }
        line.append(contentsOf: " id=".utf8)
        LineLogHandler.appendRedactedTextValue(id, to: &line)
        line.append(contentsOf: " method=".utf8)
        LineLogHandler.appendRedactedTextValue(method, to: &line)
        line.append(contentsOf: " ms=".utf8)
        let tenths = Int((milliseconds * 10).rounded())
        line.appendDecimal(tenths / 10)
        line.append(UInt8(ascii: "."))
        line.appendDecimal(tenths % 10)
        line.append(contentsOf: " path=".utf8)
        LineLogHandler.appendRedactedTextValue(path, to: &line)
        line.append(contentsOf: " proto=".utf8)
        line.append(contentsOf: wireProtocol.rawValue.utf8)
        line.append(contentsOf: " status=".utf8)
        line.appendDecimal(status)
        line.append(UInt8(ascii: "\n"))
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
        components.metrics.request(
            kind: kind, result: aborted == nil ? result : .error, protocol: wireProtocol, duration: elapsed)
        if bytes > 0 {
            components.metrics.served(bytes: bytes)
            if let stream { components.observability.activity.record(stream: stream, bytes: bytes, cmcd: cmcd) }
        }
        let level: Logger.Level = aborted == nil ? .info : .warning
        guard components.logger.logLevel <= level else { return }
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        if aborted == nil, components.observability.writesAccessLinesDirectly {
            var line: [UInt8] = []
            line.reserveCapacity(128 + path.utf8.count)
            appendAccessLine(status: status, bytes: bytes, result: result, milliseconds: milliseconds, to: &line)
            components.observability.directOutput.append(bytes: line)
            return
        }
        let fields = logFields(status: status, bytes: bytes, result: result, milliseconds: milliseconds)
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
