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

    /// Whether a tag's value is a number too large to compute with: digits past `Int.max`, a duration past
    /// ``maxSeconds`` (or infinite), a byte range whose end overflows. Anything else that does not decode (a sign,
    /// a fraction where an integer belongs, no number at all) is merely malformed, and ignored as players do.
    /// - Parameters:
    ///   - text: the value after the tag's colon.
    ///   - tag: the tag.
    static func isTooLarge(_ text: some StringProtocol, for tag: TagName) -> Bool {
        let trimmed = text.trimmingBlanks()
        switch tag {
        case .targetDuration:
            if isDigits(trimmed) { return Int(trimmed) == nil || Double(trimmed)! > maxSeconds }
            guard let value = Double(trimmed), !value.isNaN else { return false }
            return value > maxSeconds
        case .byteRange:
            let parts = trimmed.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.contains(where: { isDigits($0) && Int($0) == nil }) { return true }
            guard parts.count == 2, let length = Int(parts[0]), let offset = Int(parts[1]), length >= 0, offset >= 0
            else { return false }
            return offset > Int.max - length
        default:
            return isDigits(trimmed) && Int(trimmed) == nil
        }
    }

    private static func isDigits(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
