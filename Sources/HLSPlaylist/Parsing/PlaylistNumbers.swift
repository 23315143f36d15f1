/// The ranges hlscache accepts for numbers read from a playlist, so that no arithmetic on a number an origin sent
/// can overflow: durations are finite and at most ``maxSeconds`` (their milliseconds and nanoseconds fit in
/// `Int64`), decimal-integers are non-negative `Int`s.
enum PlaylistNumbers {
    /// The longest duration accepted, in seconds: 2³² − 1, about 136 years.
    static let maxSeconds: Double = 4_294_967_295

    /// A non-negative duration: a decimal-floating-point number in `0...maxSeconds`.
    static func seconds(_ text: some StringProtocol) -> Double? {
        guard let value = Double(text.trimmingBlanks()), value.isFinite, value >= 0, value <= maxSeconds else {
            return nil
        }
        return value
    }

    /// A signed duration: a signed-decimal-floating-point number in `-maxSeconds...maxSeconds`.
    static func signedSeconds(_ text: some StringProtocol) -> Double? {
        guard let value = Double(text.trimmingBlanks()), value.isFinite, abs(value) <= maxSeconds else { return nil }
        return value
    }

    /// A decimal-integer that fits in `Int`: digits only, no sign.
    static func decimalInteger(_ text: some StringProtocol) -> Int? {
        let trimmed = text.trimmingBlanks()
        guard let first = trimmed.utf8.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            return nil
        }
        return Int(trimmed)
    }

    /// A whole number of seconds written as an integer or, leniently, as a decimal (`10.0`, rounded up), within
    /// `0...maxSeconds`.
    static func wholeSeconds(_ text: some StringProtocol) -> Int? {
        if let integer = decimalInteger(text) { return Double(integer) <= maxSeconds ? integer : nil }
        return seconds(text).map { Int($0.rounded(.up)) }
    }

    /// Whether `text` is written as a number (digits, sign, point, exponent, `@`), so that a value of it that does
    /// not decode is out of range rather than not a number at all.
    static func looksNumeric(_ text: some StringProtocol) -> Bool {
        let trimmed = text.trimmingBlanks()
        return !trimmed.isEmpty
            && trimmed.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e")
                    || byte == UInt8(ascii: "E") || byte == UInt8(ascii: "@")
            }
    }
}
