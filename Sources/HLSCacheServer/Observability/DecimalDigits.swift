extension [UInt8] {
    /// Appends `value` in decimal, as `String(value)` spells it (a minus sign first when negative), without making
    /// the string.
    mutating func appendDecimal(_ value: Int) {
        if value < 0 { append(UInt8(ascii: "-")) }
        withDecimalDigits(of: UInt64(value.magnitude)) { append(contentsOf: $0) }
    }

    /// Appends `value` (not negative) in decimal with exactly `width` digits: leading zeros, and only the last
    /// `width` digits of a longer number.
    mutating func appendDigits(_ value: Int, width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        while divisor > 0 {
            append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }
}

/// Calls `body` with the decimal digits of `value`, made on the stack: the one digit loop of the access line and of
/// the heads the hit path writes (`ByteBuffer.writeDecimal`).
@discardableResult
func withDecimalDigits<Result>(of value: UInt64, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for UInt64.max's 20 digits
    return withUnsafeMutableBytes(of: &digits) { raw in
        var rest = value
        var start = raw.count
        repeat {
            start -= 1
            raw[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
        } while rest > 0
        return body(UnsafeRawBufferPointer(rebasing: raw[start...]))
    }
}
