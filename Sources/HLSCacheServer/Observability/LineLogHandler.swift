import Foundation
import Logging

/// A swift-log handler that writes one line per message to standard output, as `key=value` text or as JSON.
///
/// Text: `2026-11-21T10:00:00.123Z info request method=GET path=/o/https/... status=200`.
/// JSON: `{"ts":"2026-11-21T10:00:00.123Z","level":"info","msg":"request","method":"GET",...}`.
///
/// Every message and value goes through ``SecretRedaction`` first: no query value or URL userinfo is written.
///
/// Lines are written by a thread of their own, never making a response wait on standard output: `info` and below
/// (the access log) in batches, `notice` and above at once, after what is queued. Call ``flush()`` before the
/// process exits.
public struct LineLogHandler: LogHandler {
    /// The handler's metadata, merged under each message's.
    public var metadata: Logger.Metadata = [:]
    /// The lowest level written.
    public var logLevel: Logger.Level = .info
    private let label: String
    private let format: ServerConfiguration.LogFormat
    /// Where lines go: standard output, or the lines of a server a test runs in its own process.
    let output: LogOutput

    /// Creates a handler that writes to standard output.
    /// - Parameters:
    ///   - label: the logger's label (written in JSON lines as `logger`).
    ///   - format: text or JSON.
    public init(label: String, format: ServerConfiguration.LogFormat) {
        self.init(label: label, format: format, output: .standardOutput)
    }

    /// Creates a handler whose lines go to `output`.
    init(label: String, format: ServerConfiguration.LogFormat, output: LogOutput) {
        self.label = label
        self.format = format
        self.output = output
    }

    /// Creates a handler that hands its lines (whole ones, with their newlines, in batches) to `lines`, from a
    /// thread of its own: the log of a server a test runs in its own process.
    /// - Parameters:
    ///   - label: the logger's label.
    ///   - format: text or JSON.
    ///   - lines: takes each batch.
    public init(label: String, format: ServerConfiguration.LogFormat, lines: @escaping @Sendable ([UInt8]) -> Void) {
        self.init(label: label, format: format, output: LogOutput(lines: lines))
    }

    /// Reads or writes one metadata value.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes the lines still queued; call it before the process exits.
    public static func flush() {
        LogOutput.standardOutput.flush()
    }

    /// Whether an access line written straight to the output (``AccessRecord/appendAccessLine(status:bytes:result:milliseconds:timestamp:to:)``)
    /// is the line this handler would write: text format, and no metadata of the handler's own to merge in.
    var writesInfoLinesDirectly: Bool { format == .text && metadata.isEmpty }

    /// A text line without its newline: timestamp, level, message, then `key=value` for each field in the order
    /// given; every message and value redacted, values quoted when they hold a space, a quote or `=`.
    static func textLine(
        timestamp: String, level: Logger.Level, message: String,
        fields: some Sequence<(String, Logger.Metadata.Value)>
    ) -> String {
        var line = timestamp
        line.reserveCapacity(256)
        line += " "
        line += level.rawValue
        line += " "
        line += SecretRedaction.redact(message)
        for (key, value) in fields {
            line += " "
            line += key
            line += "="
            line += textValue(value)
        }
        return line
    }

    /// Writes one line: queued for the log's writer thread at `info` and below, at once above.
    public func log(event: LogEvent) {
        var merged = event.metadata ?? [:]
        if !metadata.isEmpty { merged.merge(metadata) { event, _ in event } }
        let timestamp = LogTimestamp.now()
        var line: String
        switch format {
        case .text:
            line = Self.textLine(
                timestamp: timestamp, level: event.level, message: "\(event.message)",
                fields: merged.sorted(by: { $0.key < $1.key }).lazy.map { ($0.key, $0.value) })
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
        // The access log (info) is written in batches off the responding thread; what went wrong, without waiting
        // for more lines.
        if event.level <= .info {
            output.append(line)
        } else {
            output.write(line)
        }
    }

    private static func textValue(_ value: Logger.Metadata.Value) -> String {
        let text: String
        if case .string(let string) = value { text = string } else { text = "\(value)" }
        var bytes: [UInt8] = []
        appendRedactedTextValue(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `text` redacted (``SecretRedaction/redact(_:)``) and written as ``appendTextValue(_:to:)`` writes it.
    ///
    /// One pass over the bytes first: a value with nothing to redact or quote (no `?`, `@`, blank, quote or `=`),
    /// like most request targets, is copied as it is, with neither a redacted copy nor a second scan.
    static func appendRedactedTextValue(_ text: String, to line: inout [UInt8]) {
        let plain = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard !bytes.isEmpty else { return false }
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "?"), UInt8(ascii: "@"), UInt8(ascii: " "), UInt8(ascii: "\""), UInt8(ascii: "="):
                    return false
                default: continue
                }
            }
            line.append(contentsOf: bytes)
            return true
        }
        if plain != true { appendTextValue(SecretRedaction.redact(text), to: &line) }
    }

    /// Appends a (redacted) value as the text format writes it: quoted, with its quotes and backslashes escaped, when
    /// it is empty or holds a space, a quote or `=`; as it is otherwise.
    static func appendTextValue(_ text: String, to line: inout [UInt8]) {
        let needsQuotes =
            text.isEmpty
            || text.utf8.contains { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "=") }
        guard needsQuotes else {
            line.append(contentsOf: text.utf8)
            return
        }
        line.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            // A backslash too: unescaped, `a\" x=1` would close the value early for a reader that unescapes.
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { line.append(UInt8(ascii: "\\")) }
            line.append(byte)
        }
        line.append(UInt8(ascii: "\""))
    }
}
