import HLSCacheTestTraits
import Logging
import Testing

@testable import HLSCacheServer

/// The access log's line, one per request: written straight to the output or through swift-log, the same line.
@Suite("Access-log line", .sharedMachine)
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
        var queued: [UInt8] = []
        Self.record.appendAccessLine(
            status: 200, bytes: 1_234, result: .hit, milliseconds: 0.46, timestamp: "T", to: &queued)
        #expect(String(decoding: queued, as: UTF8.self) == direct + "\n")
        #expect(
            direct
                == #"T info request bytes=1234 cache=HIT id=ab12-7 method=GET ms=0.5 "#
                + #"path="/o/https/cdn.example/live/seg 1.ts?token=***&q=\"a\"" proto=http/1.1 status=200"#)
    }

    @Test(
        "the line written straight to the output is the handler's, whatever the fields hold",
        arguments: [
            (
                AccessRecord(method: "GET", path: "/o/https/a.example/seg.ts", id: "1-2", start: .now), 0, 0.0,
                CacheResult.miss
            ),
            (
                AccessRecord(method: "HEAD", path: "/x y?token=s&z", id: "a b=\"c\"", start: .now), 9_999_999_999,
                12.34, .stale
            ),
            (
                AccessRecord(method: "M@?", path: "/o/http/user:pw@h.example/p", id: "", start: .now), -1, 1_234.96,
                .error
            ),
        ])
    func everyDirectLineIsTheHandlers(record: AccessRecord, bytes: Int64, milliseconds: Double, result: CacheResult) {
        for status in [200, 206, 304, 404, 504] {
            let fields = record.logFields(status: status, bytes: bytes, result: result, milliseconds: milliseconds)
            let handler = LineLogHandler.textLine(
                timestamp: "2026-11-26T17:00:00.123Z", level: .info, message: "request",
                fields: fields.map { ($0.key, .string($0.value)) })
            var line: [UInt8] = []
            record.appendAccessLine(
                status: status, bytes: bytes, result: result, milliseconds: milliseconds,
                timestamp: "2026-11-26T17:00:00.123Z", to: &line)
            #expect(String(decoding: line, as: UTF8.self) == handler + "\n")
        }
    }

    @Test("a value copied in one pass is what redacting and then quoting it writes")
    func onePassValueIsTheRedactedQuotedValue() {
        let values = [
            "", "GET", "/o/https/a.example/seg.ts", "/o/https/a.example/seg.ts?token=s", "/o/http/u:p@h/p", "a=b",
            "a b", "say \"hi\"", "=", "?", "@", "/é/ü.ts", "/x?_HLS_msn=3&_HLS_part=1", "1f3a-07",
        ]
        for value in values {
            var onePass: [UInt8] = []
            LineLogHandler.appendRedactedTextValue(value, to: &onePass)
            var twoSteps: [UInt8] = []
            LineLogHandler.appendTextValue(SecretRedaction.redact(value), to: &twoSteps)
            #expect(onePass == twoSteps, "\(value)")
        }
    }

    @Test("numbers are spelled as String spells them, and fixed widths keep their leading zeros")
    func digitsAreStringsDigits() {
        for value in [0, 7, -7, 10, 99, 1_000_000, -2_147_483_648, Int.max, Int.min] {
            var bytes: [UInt8] = []
            bytes.appendDecimal(value)
            #expect(String(decoding: bytes, as: UTF8.self) == String(value))
        }
        var fixed: [UInt8] = []
        fixed.appendDigits(7, width: 3)
        fixed.appendDigits(2026, width: 4)
        fixed.appendDigits(12345, width: 2)
        #expect(String(decoding: fixed, as: UTF8.self) == "007202645")
    }
}
