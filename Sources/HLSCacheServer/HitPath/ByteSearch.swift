import NIOCore

/// Byte searches over a string's UTF-8, for code that runs on every request: the generic collection algorithms
/// cost more than the rest of a hit together.
enum ByteSearch {
    /// The offset of the first occurrence of `needle` in `text`'s UTF-8, or `nil`.
    static func offset(of needle: StaticString, in text: String) -> Int? {
        var text = text
        return text.withUTF8 { bytes in
            let count = needle.utf8CodeUnitCount
            guard count > 0, bytes.count >= count else { return nil }
            let pattern = UnsafeBufferPointer(start: needle.utf8Start, count: count)
            var start = 0
            while start <= bytes.count - count {
                if bytes[start] == pattern[0], (1..<count).allSatisfy({ bytes[start + $0] == pattern[$0] }) {
                    return start
                }
                start += 1
            }
            return nil
        }
    }

    /// `text` up to the first byte at or after `start` that is one of `stops` (all of it when there is none).
    static func prefix(of text: String, from start: Int, stoppingAt stops: StaticString) -> String {
        var text = text
        return text.withUTF8 { bytes in
            let stopBytes = UnsafeBufferPointer(start: stops.utf8Start, count: stops.utf8CodeUnitCount)
            var end = min(start, bytes.count)
            while end < bytes.count, !stopBytes.contains(bytes[end]) { end += 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
        }
    }

    /// Whether `bytes` may hold a head's end starting at or after `offset` (of their readable bytes): a line feed
    /// followed by another, or by `CR LF` (`CRLF CRLF`, and the bare line feeds the scanner refuses at once, which
    /// must not wait for more bytes).
    static func containsHeadEnd(_ bytes: ByteBuffer, from offset: Int) -> Bool {
        bytes.withUnsafeReadableBytes { raw in
            var index = max(0, offset)
            while index + 1 < raw.count {
                if raw[index] == 10 {
                    if raw[index + 1] == 10 { return true }
                    if raw[index + 1] == 13, index + 2 < raw.count, raw[index + 2] == 10 { return true }
                }
                index += 1
            }
            return false
        }
    }
}
