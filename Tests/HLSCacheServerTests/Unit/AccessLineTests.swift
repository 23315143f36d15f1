import Logging
import Testing

@testable import HLSCacheServer

/// The access log's line, one per request: written straight to the output or through swift-log, the same line.
@Suite("Access-log line")
struct AccessLineTests {
    static let record = AccessRecord(
        method: "GET", path: #"/o/https/cdn.example/live/seg 1.ts?token=secret&q="a""#, id: "ab12-7", start: .now)

    @Test("the fields come in the order the handler sorts metadata keys, so both paths write the same line")
    func directLineIsTheHandlersLine() {
        let fields = Self.record.logFields(status: 200, bytes: 1_234, result: .hit, milliseconds: 0.46)
        #expect(fields.map(\.key) == fields.map(\.key).sorted())
        let direct = LineLogHandler.textLine(
            timestamp: "T", level: .info, message: "request", fields: fields.map { ($0.key, .string($0.value)) })
        let metadata = Logger.Metadata(uniqueKeysWithValues: fields.map { ($0.key, .string($0.value)) })
        let throughSwiftLog = LineLogHandler.textLine(
            timestamp: "T", level: .info, message: "request",
            fields: metadata.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        #expect(direct == throughSwiftLog)
        let queued = LineLogHandler.infoLine(timestamp: "T", message: "request", fields: fields)
        #expect(String(decoding: queued, as: UTF8.self) == direct + "\n")
        #expect(
            direct
                == #"T info request bytes=1234 cache=HIT id=ab12-7 method=GET ms=0.5 "#
                + #"path="/o/https/cdn.example/live/seg 1.ts?token=***&q=\"a\"" status=200"#)
    }
}
