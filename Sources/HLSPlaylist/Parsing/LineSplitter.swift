import Foundation
import ManifestURLs

/// Splits bytes into lines at LF, CRLF or a bare CR.
struct LineSplitter {
    let buffer: UnsafeBufferPointer<UInt8>
    /// Where the LFs are, and whether a CR occurs.
    let survey: ByteSurvey
    /// At least the number of lines in `buffer` (LF and CR each end one; a CRLF counts twice), for reserving.
    let lineCountBound: Int

    /// A splitter of `buffer`, whose bytes `survey` looked at.
    init(_ buffer: UnsafeBufferPointer<UInt8>, survey: ByteSurvey) {
        self.buffer = buffer
        self.survey = survey
        var carriageReturns = 0
        if survey.hasCarriageReturn, let base = buffer.baseAddress {
            var start = 0
            while start < buffer.count, let hit = memchr(base + start, Int32(ASCII.cr), buffer.count - start) {
                carriageReturns += 1
                start = UnsafeRawPointer(hit) - UnsafeRawPointer(base) + 1
            }
        }
        lineCountBound = 1 + survey.lineFeeds.count + carriageReturns
    }

    /// Calls `body` with each line's start and end (terminator excluded) until it returns false.
    /// A final line without a terminator is reported; an empty final line after the last terminator is not.
    @inline(__always)
    func forEachLine(_ body: (Int, Int) -> Bool) {
        let count = buffer.count
        guard count > 0 else { return }
        if !survey.hasCarriageReturn {
            var start = 0
            for feed in survey.lineFeeds {
                let end = Int(feed)
                guard body(start, end) else { return }
                start = end + 1
            }
            if start < count { _ = body(start, count) }
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
