/// `xs:duration` values (`PT1.5S`, `P1DT2H`, `PT0S`), as seconds.
enum ISODuration {
    /// The longest duration read: larger ones are out of range (about 136 years).
    static let maxSeconds = Double(UInt32.max)

    /// Parses an `xs:duration`; `nil` when it is not one, negative, or longer than ``maxSeconds``. Years count 365
    /// days and months 30.
    static func seconds(_ text: String) -> Double? {
        var bytes = Substring(text.trimmingSpaces)
        guard bytes.first == "P" else { return nil }
        bytes = bytes.dropFirst()
        var total = 0.0
        var inTime = false
        var number = ""
        var sawComponent = false
        for character in bytes {
            switch character {
            case "T":
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
            case "0"..."9", ".":
                number.append(character)
            default:
                guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
                let unit: Double
                switch (character, inTime) {
                case ("Y", false): unit = 365 * 86_400
                case ("M", false): unit = 30 * 86_400
                case ("W", false): unit = 7 * 86_400
                case ("D", false): unit = 86_400
                case ("H", true): unit = 3_600
                case ("M", true): unit = 60
                case ("S", true): unit = 1
                default: return nil
                }
                total += value * unit
                guard total <= maxSeconds else { return nil }
                number = ""
                sawComponent = true
            }
        }
        guard number.isEmpty, sawComponent else { return nil }
        return total
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks.
    var trimmingSpaces: Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else {
            return ""
        }
        return self[first...last]
    }
}
