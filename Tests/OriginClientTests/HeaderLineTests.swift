import HLSCacheTestTraits
import Testing

@testable import OriginClient

/// Head lines read as bytes (`HeaderLine`): what each kind of line becomes.
@Suite("Head lines", .sharedMachine)
struct HeaderLineTests {
    private static func read(_ text: String) -> HeaderLine.Kind {
        Array(text.utf8).withUnsafeBytes { HeaderLine.read($0) }
    }

    @Test func aFieldHasItsNameInLowerCaseAndItsValueTrimmed() {
        #expect(Self.read("Content-Type: \t video/MP2T \t\r\n") == .field(name: "content-type", value: "video/MP2T"))
        #expect(Self.read("ETag:\"abc\"\n") == .field(name: "etag", value: "\"abc\""))
        #expect(Self.read("X-Empty:\r\n") == .field(name: "x-empty", value: ""))
        // Only the first colon splits: a value keeps its own.
        #expect(
            Self.read("Location: http://a.test:8080/x\r\n") == .field(name: "location", value: "http://a.test:8080/x"))
    }

    @Test func statusBlankContinuationAndOtherLinesAreToldApart() {
        #expect(Self.read("HTTP/1.1 200 OK\r\n") == .status)
        #expect(Self.read("HTTP/2 404\r\n") == .status)
        #expect(Self.read("\r\n") == .end)
        #expect(Self.read("") == .end)
        #expect(Self.read("  folded part \r\n") == .continuation("folded part"))
        #expect(Self.read("\tfolded\r\n") == .continuation("folded"))
        #expect(Self.read("no colon here\r\n") == .other)
    }

    @Test func bytesThatAreNotUTF8AreReplacedNotTrappedOn() {
        let line: [UInt8] = Array("X-Bad: a".utf8) + [0xFF, 0xFE] + Array("b\r\n".utf8)
        #expect(line.withUnsafeBytes { HeaderLine.read($0) } == .field(name: "x-bad", value: "a\u{FFFD}\u{FFFD}b"))
        let name: [UInt8] = [0xC3, 0x89] + Array("Tag: 1\r\n".utf8)
        #expect(name.withUnsafeBytes { HeaderLine.read($0) } == .field(name: "\u{C9}tag", value: "1"))
    }
}
