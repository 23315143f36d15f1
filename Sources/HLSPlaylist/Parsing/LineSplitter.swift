import Foundation

/// Splits bytes into lines at LF, CRLF or a bare CR.
struct LineSplitter {
    let buffer: UnsafeBufferPointer<UInt8>
    /// At least the number of lines in `buffer` (LF and CR each end one; a CRLF counts twice), for reserving.
    let lineCountBound: Int
    /// Whether `buffer` holds a CR: without one, lines end at each LF, found with `memchr`.
    let hasCarriageReturn: Bool

    /// Counts the line terminators of `buffer` (one `memchr` pass per kind).
    init(_ buffer: UnsafeBufferPointer<UInt8>) {
        self.buffer = buffer
        var counts = (lf: 0, cr: 0)
        if let base = buffer.baseAddress {
            for terminator in [ASCII.lf, ASCII.cr] {
                var start = 0
                var found = 0
                while start < buffer.count, let hit = memchr(base + start, Int32(terminator), buffer.count - start) {
                    found += 1
                    start = UnsafeRawPointer(hit) - UnsafeRawPointer(base) + 1
                }
                if terminator == ASCII.lf { counts.lf = found } else { counts.cr = found }
            }
        }
        lineCountBound = 1 + counts.lf + counts.cr
        hasCarriageReturn = counts.cr > 0
    }

    /// Calls `body` with each line's start and end (terminator excluded) until it returns false.
    /// A final line without a terminator is reported; an empty final line after the last terminator is not.
    @inline(__always)
    func forEachLine(_ body: (Int, Int) -> Bool) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let count = buffer.count
        if !hasCarriageReturn {
            var start = 0
            while start < count {
                let found = memchr(base + start, Int32(ASCII.lf), count - start)
                let end = found.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? count
                guard body(start, end) else { return }
                start = end + 1
            }
            return
        }
        var start = 0
        var index = 0
        while index < count {
            let byte = buffer[index]
            if byte == ASCII.lf || byte == ASCII.cr {
                guard body(start, index) else { return }
                if byte == ASCII.cr, index + 1 < count, buffer[index + 1] == ASCII.lf { index += 1 }
                start = index + 1
            }
            index += 1
        }
        if start < count { _ = body(start, count) }
    }
}

/// UTF-8 validation with an ASCII fast path.
enum UTF8Check {
    /// The 1-based line of the first invalid UTF-8 sequence, or `nil` when all is valid.
    static func firstInvalidLine(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { buffer -> Int? in
            let count = buffer.count
            guard let base = UnsafeRawPointer(buffer.baseAddress) else { return nil }
            var index = 0
            while index + 8 <= count {
                if base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
                index += 8
            }
            while index < count, buffer[index] < 0x80 { index += 1 }
            if index == count { return nil }
            if String(validating: buffer, as: UTF8.self) != nil { return nil }
            var line = 1
            var lineStart = 0
            for position in 0..<count where buffer[position] == ASCII.lf {
                let slice = UnsafeBufferPointer(rebasing: buffer[lineStart..<position])
                if String(validating: slice, as: UTF8.self) == nil { return line }
                line += 1
                lineStart = position + 1
            }
            return line
        }
    }
}
