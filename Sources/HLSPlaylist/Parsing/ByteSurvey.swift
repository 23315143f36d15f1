import ManifestURLs

/// What one pass over a playlist's bytes, eight at a time, tells the parser before it reads a line: where each LF
/// is, and whether a CR, a byte outside ASCII or a `{` occurs at all.
///
/// Each of these took a pass of its own before (a `memchr` call per line, and full scans for the terminator counts,
/// UTF-8 and `{$`); most playlists are ASCII with LF endings and no variables, and need no other pass.
struct ByteSurvey {
    /// The offset of every LF, in order (offsets fit: the parser takes at most 1 GiB).
    private(set) var lineFeeds: [Int32] = []
    /// Whether a CR occurs: lines may then end at a CR or a CRLF too.
    private(set) var hasCarriageReturn = false
    /// Whether every byte is below 0x80: then the bytes are valid UTF-8 with no further check.
    private(set) var isASCII = true
    /// Whether a `{` occurs: without one, no variable reference (`{$name}`) can.
    private(set) var hasOpenBrace = false
    /// Whether the survey stopped early, past `maxLineFeeds` LFs; the other fields then describe only what it read.
    private(set) var hasTooManyLineFeeds = false

    /// Surveys `buffer`, stopping once it has found more than `maxLineFeeds` LFs (the offsets kept are bounded too).
    init(_ buffer: UnsafeBufferPointer<UInt8>, maxLineFeeds: Int = .max) {
        guard let base = buffer.baseAddress else { return }
        let count = buffer.count
        lineFeeds.reserveCapacity(min(count / 32, maxLineFeeds) + 16)
        let raw = UnsafeRawPointer(base)
        var high: UInt64 = 0
        var carriageReturns: UInt64 = 0
        var braces: UInt64 = 0
        var index = 0
        while index &+ 8 <= count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            high |= word
            carriageReturns |= Self.zeroBytes(word ^ Self.repeated(ASCII.cr))
            braces |= Self.zeroBytes(word ^ Self.repeated(UInt8(ascii: "{")))
            var feeds = Self.zeroBytes(word ^ Self.repeated(ASCII.lf))
            while feeds != 0 {
                lineFeeds.append(Int32(truncatingIfNeeded: index &+ feeds.trailingZeroBitCount >> 3))
                feeds &= feeds &- 1
            }
            index &+= 8
            if lineFeeds.count > maxLineFeeds {
                hasTooManyLineFeeds = true
                return
            }
        }
        while index < count {
            let byte = base[index]
            if byte == ASCII.lf { lineFeeds.append(Int32(truncatingIfNeeded: index)) }
            if byte == ASCII.cr { carriageReturns = 1 }
            if byte == UInt8(ascii: "{") { braces = 1 }
            high |= UInt64(byte)
            index &+= 1
        }
        hasTooManyLineFeeds = lineFeeds.count > maxLineFeeds
        hasCarriageReturn = carriageReturns != 0
        hasOpenBrace = braces != 0
        isASCII = high & 0x8080_8080_8080_8080 == 0
    }

    /// `byte` in each of a word's eight bytes.
    @inline(__always)
    private static func repeated(_ byte: UInt8) -> UInt64 { 0x0101_0101_0101_0101 &* UInt64(byte) }

    /// The high bit of each byte of `word` that is zero, exactly (no borrow runs from one byte into the next).
    @inline(__always)
    static func zeroBytes(_ word: UInt64) -> UInt64 {
        let low: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        return ~(((word & low) &+ low) | word | low)
    }
}
