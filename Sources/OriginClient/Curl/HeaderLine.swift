/// One line of an origin's response head, as libcurl hands it over, read as bytes: no `String` is made of the whole
/// line and no `Character` is looked at (grapheme breaking and Unicode case mapping are the slowest code a head goes
/// through, and cold on a miss's first byte).
enum HeaderLine {
    /// What a head line is.
    enum Kind: Equatable {
        /// A status line (`HTTP/1.1 200 OK`): a new head starts.
        case status
        /// The blank line ending a head.
        case end
        /// An obsolete folded continuation of the previous field: its text, trimmed.
        case continuation(String)
        /// A field: its name in lower case and its value, trimmed of spaces and tabs.
        case field(name: String, value: String)
        /// Anything else (no colon): ignored.
        case other
    }

    /// Reads `line`, its `\r\n` (or `\n`) included or not.
    static func read(_ line: UnsafeRawBufferPointer) -> Kind {
        var length = line.count
        while length > 0, line[length - 1] == UInt8(ascii: "\n") || line[length - 1] == UInt8(ascii: "\r") {
            length -= 1
        }
        let bytes = UnsafeRawBufferPointer(rebasing: line[0..<length])
        if bytes.starts(with: "HTTP/".utf8) { return .status }
        guard let first = bytes.first else { return .end }
        if isSpace(first) { return .continuation(trimmed(bytes[...])) }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return .other }
        return .field(name: lowercased(bytes[..<colon]), value: trimmed(bytes[(colon + 1)...]))
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// The bytes without leading and trailing spaces and tabs, as UTF-8 (invalid sequences replaced).
    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    /// A field name with ASCII letters in lower case (a name is a token: ASCII only; other bytes are kept).
    private static func lowercased(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
        let lower = bytes.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }
        return String(decoding: lower, as: UTF8.self)
    }
}
