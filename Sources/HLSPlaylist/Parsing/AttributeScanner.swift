import ManifestURLs

/// Where one attribute of an attribute list lies in a line's bytes.
struct AttributeSpan: Sendable {
    var nameStart: Int
    var nameEnd: Int
    /// For a quoted value, the bytes between the quotes.
    var valueStart: Int
    var valueEnd: Int
    var isQuoted: Bool
}

/// Scans an attribute list (RFC 8216bis section 4.2) in place, without building strings.
///
/// Lenient where players are: blank space around names, `=` and commas; lowercase names;
/// a trailing comma; unquoted values running to the next comma. Strict where a URI could be
/// misplaced: an unterminated quote, a missing `=`, text after a closing quote.
enum AttributeScanner {
    /// Scans `range` of `bytes` and appends one span per attribute.
    /// - Returns: `nil` on success, or what is malformed.
    static func scan(
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ range: Range<Int>,
        into spans: inout [AttributeSpan]
    ) -> String? {
        var index = range.lowerBound
        let end = range.upperBound
        while true {
            while index < end, ASCII.isBlank(bytes[index]) { index += 1 }
            if index == end { return nil }
            let nameStart = index
            while index < end, ASCII.isNameByte(bytes[index]) { index += 1 }
            let nameEnd = index
            if nameEnd == nameStart { return "expected an attribute name at column \(index - range.lowerBound + 1)" }
            while index < end, ASCII.isBlank(bytes[index]) { index += 1 }
            guard index < end, bytes[index] == ASCII.equals else {
                return "attribute without '=' at column \(nameStart - range.lowerBound + 1)"
            }
            index += 1
            while index < end, ASCII.isBlank(bytes[index]) { index += 1 }
            var span = AttributeSpan(
                nameStart: nameStart, nameEnd: nameEnd, valueStart: index, valueEnd: index, isQuoted: false)
            if index < end, bytes[index] == ASCII.quote {
                let close = bytes.firstIndex(of: ASCII.quote, in: (index + 1)..<end)
                if close == end { return "unterminated quoted string at column \(index - range.lowerBound + 1)" }
                span.valueStart = index + 1
                span.valueEnd = close
                span.isQuoted = true
                index = close + 1
                while index < end, ASCII.isBlank(bytes[index]) { index += 1 }
                if index < end, bytes[index] != ASCII.comma {
                    return "unexpected text after a quoted string at column \(index - range.lowerBound + 1)"
                }
            } else {
                let comma = bytes.firstIndex(of: ASCII.comma, in: index..<end)
                var valueEnd = comma
                while valueEnd > index, ASCII.isBlank(bytes[valueEnd - 1]) { valueEnd -= 1 }
                span.valueEnd = valueEnd
                if bytes.firstIndex(of: ASCII.quote, in: index..<valueEnd) != valueEnd {
                    return "stray quote in an unquoted value at column \(index - range.lowerBound + 1)"
                }
                index = comma
            }
            spans.append(span)
            if index == end { return nil }
            index += 1  // the comma
        }
    }
}
