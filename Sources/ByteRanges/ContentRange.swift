/// `Content-Range: bytes first-last/complete` of a 206 answer (RFC 9110 section 14.4), checked: digits only,
/// `first <= last`, and a complete length, when given, greater than `last`.
public struct ContentRange: Hashable, Sendable {
    /// The offset of the first byte sent.
    public var first: Int64
    /// The offset of the last byte sent.
    public var last: Int64
    /// The length of the whole object, or `nil` for `*`.
    public var completeLength: Int64?

    /// The number of bytes sent (never overflows: `first >= 0` and `last < Int64.max` are checked).
    public var length: Int64 { last - first + 1 }

    /// Parses the header's value; `nil` when it is not a valid satisfied range.
    /// - Parameter header: the `Content-Range` value.
    public init?(header: String) {
        var text = header
        guard let parsed = text.withUTF8({ Self.parse($0) }) else { return nil }
        self = parsed
    }

    private init(first: Int64, last: Int64, completeLength: Int64?) {
        self.first = first
        self.last = last
        self.completeLength = completeLength
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> ContentRange? {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        let unit = Array("bytes ".utf8)
        guard end - start > unit.count else { return nil }
        for (offset, expected) in unit.enumerated() {
            let byte = bytes[start + offset]
            guard (offset < 5 ? byte | 0x20 : byte) == expected else { return nil }
        }
        start += unit.count
        guard let dash = (start..<end).first(where: { bytes[$0] == UInt8(ascii: "-") }),
            let slash = (dash..<end).first(where: { bytes[$0] == UInt8(ascii: "/") }),
            let first = HeaderNumber(bytes, start..<dash).value,
            let last = HeaderNumber(bytes, (dash + 1)..<slash).value,
            first <= last, last < .max
        else { return nil }
        let completeText = (slash + 1)..<end
        if completeText.count == 1, bytes[completeText.lowerBound] == UInt8(ascii: "*") {
            return ContentRange(first: first, last: last, completeLength: nil)
        }
        guard let complete = HeaderNumber(bytes, completeText).value, complete > last else { return nil }
        return ContentRange(first: first, last: last, completeLength: complete)
    }
}
