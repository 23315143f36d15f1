import Foundation
import Logging
import Synchronization

/// A swift-log handler that writes one line per message to standard output, as `key=value` text or as JSON.
///
/// Text: `2026-11-21T10:00:00.123Z info request method=GET path=/o/https/... status=200`.
/// JSON: `{"ts":"2026-11-21T10:00:00.123Z","level":"info","msg":"request","method":"GET",...}`.
///
/// Every message and value goes through ``SecretRedaction`` first: no query value or URL userinfo is written.
public struct LineLogHandler: LogHandler {
    /// The handler's metadata, merged under each message's.
    public var metadata: Logger.Metadata = [:]
    /// The lowest level written.
    public var logLevel: Logger.Level = .info
    private let label: String
    private let format: ServerConfiguration.LogFormat
    private static let output = Mutex<Void>(())

    /// Creates a handler.
    /// - Parameters:
    ///   - label: the logger's label (written in JSON lines as `logger`).
    ///   - format: text or JSON.
    public init(label: String, format: ServerConfiguration.LogFormat) {
        self.label = label
        self.format = format
    }

    /// Reads or writes one metadata value.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one line.
    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        let timestamp = Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(Date())
        var line: String
        switch format {
        case .text:
            line = "\(timestamp) \(event.level) \(SecretRedaction.redact("\(event.message)"))"
            for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
                line += " \(key)=\(Self.textValue(value))"
            }
        case .json:
            var object: [String: String] = [
                "ts": timestamp, "level": event.level.rawValue, "msg": SecretRedaction.redact("\(event.message)"),
                "logger": label,
            ]
            for (key, value) in merged { object[key] = SecretRedaction.redact("\(value)") }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
            line = String(decoding: data, as: UTF8.self)
        }
        line += "\n"
        Self.output.withLock { _ in
            FileHandle.standardOutput.write(Data(line.utf8))
        }
    }

    private static func textValue(_ value: Logger.Metadata.Value) -> String {
        let text = SecretRedaction.redact("\(value)")
        return text.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) || text.isEmpty
            ? "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\"" : text
    }
}
