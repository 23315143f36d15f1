import ByteRanges
import HLSCacheTestTraits
import SegmentCache
import Testing

/// `Range` and `Content-Range` parsing: every number checked, nothing traps.
@Suite("Range headers", .sharedMachine)
struct RangeHeaderTests {
    @Test(
        "Range headers parse into what RFC 9110 means, without overflow",
        arguments: [
            ("bytes=0-99", RequestedRange.closed(first: 0, last: 99)),
            (" Bytes=5-5 ", .closed(first: 5, last: 5)),
            ("bytes=100-", .from(100)),
            ("bytes=-500", .suffix(500)),
            ("bytes=0-9223372036854775807", .from(0)),
            ("bytes=0-99999999999999999999", .from(0)),
            ("bytes=9223372036854775807-", .from(9_223_372_036_854_775_807)),
            ("bytes=-99999999999999999999", .suffix(.max)),
            ("bytes=10-1099511627786", .from(10)),
        ])
    func parses(header: String, expected: RequestedRange) {
        #expect(RequestedRange(header: header) == expected)
    }

    @Test(
        "invalid or multiple ranges are ignored (nil: the whole object is sent)",
        arguments: [
            "bytes=5-3", "bytes=-0", "bytes=1-2,4-5", "items=0-1", "bytes=", "bytes=-", "bytes=a-b", "bytes=+1-2",
            "bytes=99999999999999999999-", "",
        ])
    func ignores(header: String) {
        #expect(RequestedRange(header: header) == nil)
    }

    @Test("resolving against a length clips the end and refuses a start past it")
    func resolves() {
        #expect(RequestedRange.closed(first: 50, last: 150).resolved(length: 100) == ByteRange(offset: 50, length: 50))
        #expect(RequestedRange.from(100).resolved(length: 100) == nil)
        #expect(RequestedRange.suffix(.max).resolved(length: 100) == ByteRange(offset: 0, length: 100))
        #expect(RequestedRange.from(.max).resolved(length: .max) == nil)
        #expect(
            RequestedRange.closed(first: 0, last: .max - 1).resolved(length: .max) == ByteRange(offset: 0, length: .max)
        )
    }

    @Test("a closed range is a key of its own; an open one is cut from the whole object")
    func keys() {
        let closed = CacheKey(origin: "https://o/a.ts", requested: .closed(first: 10, last: 19))
        #expect(closed.range == ByteRange(offset: 10, length: 10))
        #expect(CacheKey(origin: "https://o/a.ts", requested: .from(10)).range == nil)
    }

    @Test(
        "Content-Range parses only a valid satisfied range",
        arguments: [
            ("bytes 0-99/100", ContentRange?.some(.init(header: "bytes 0-99/100")!)),
            ("bytes 0-99/*", .some(.init(header: "bytes 0-99/*")!)),
            ("bytes 0-99/99", nil), ("bytes 5-4/10", nil), ("bytes */100", nil),
            ("bytes 0-9223372036854775807/*", nil), ("bytes 0-99999999999999999999/*", nil), ("bytes -1-5/10", nil),
        ])
    func contentRange(header: String, expected: ContentRange?) {
        #expect(ContentRange(header: header) == expected)
    }

    @Test("Content-Range values and length")
    func contentRangeValues() throws {
        let range = try #require(
            ContentRange(header: "BYTES 9223372036854775805-9223372036854775806/9223372036854775807"))
        #expect(range.first == 9_223_372_036_854_775_805)
        #expect(range.length == 2)
        #expect(range.completeLength == .max)
    }
}
