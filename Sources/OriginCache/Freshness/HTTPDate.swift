import Foundation

/// HTTP dates (RFC 9110 §5.6.7): written as IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); read in that form by
/// arithmetic, and in the obsolete RFC 850 and asctime forms through `DateFormatter`.
///
/// Writing is arithmetic too: a `DateFormatter` costs tens of microseconds to make, and the `Date` header of every
/// answer and the validators of every origin answer pass through here.
package enum HTTPDate {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"].map { Array($0.utf8) }
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        .map { Array($0.utf8) }
    /// The seconds since 1970 written: years 1 to 9999. A date outside them is written as the nearest end.
    private static let writable: ClosedRange<Int64> = -62_135_596_800...253_402_300_799
    private static let obsoleteFormats = ["EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]

    /// Parses an HTTP date.
    /// - Returns: the moment, or `nil` when `text` is none of the three forms.
    package static func parse(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let bytes = Array(trimmed.utf8)
        if let seconds = parseFixdate(bytes) {
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        }
        // Every form starts with a day name and is at least 20 bytes long: what does not (`Expires: 0`, `-1`, the
        // usual "already expired") is refused without making a formatter.
        guard bytes.count >= 20, let first = bytes.first, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(first)
        else { return nil }
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz"] + obsoleteFormats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: trimmed) { return date }
        }
        return nil
    }

    /// Formats a date as an IMF-fixdate, to the second (rounded down).
    package static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970.rounded(.down)
        let seconds =
            interval.isNaN
            ? 0 : Int64(min(max(interval, Double(writable.lowerBound)), Double(writable.upperBound)))
        let days = floorDivide(seconds, 86_400)
        let time = Int(seconds - days * 86_400)
        let (year, month, day) = civil(fromDays: days)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(29)
        bytes += weekdays[Int(((days % 7) + 11) % 7)]
        bytes += Array(", ".utf8)
        appendDigits(day, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        bytes += months[month - 1]
        bytes.append(UInt8(ascii: " "))
        appendDigits(year, count: 4, to: &bytes)
        bytes.append(UInt8(ascii: " "))
        appendDigits(time / 3600, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(time / 60 % 60, count: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(time % 60, count: 2, to: &bytes)
        bytes += Array(" GMT".utf8)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `Www, DD Mon YYYY HH:MM:SS GMT`, checked field by field (the weekday is a name, not checked against the
    /// date): seconds since 1970, or `nil` for anything else.
    private static func parseFixdate(_ text: [UInt8]) -> Int64? {
        guard text.count == 29, weekdays.contains(Array(text[0..<3])), text[3] == UInt8(ascii: ","),
            text[4] == UInt8(ascii: " "), text[7] == UInt8(ascii: " "), text[11] == UInt8(ascii: " "),
            text[16] == UInt8(ascii: " "), text[19] == UInt8(ascii: ":"), text[22] == UInt8(ascii: ":"),
            Array(text[25...]) == Array(" GMT".utf8),
            let monthIndex = months.firstIndex(of: Array(text[8..<11])),
            let day = number(text[5..<7]), let year = number(text[12..<16]), let hour = number(text[17..<19]),
            let minute = number(text[20..<22]), let second = number(text[23..<25]),
            year >= 1, hour < 24, minute < 60, second < 60,
            (1...daysIn(month: monthIndex + 1, year: year)).contains(day)
        else { return nil }
        let days = days(fromCivil: year, month: monthIndex + 1, day: day)
        return days * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }

    private static func appendDigits(_ value: Int, count: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let quotient = value / divisor
        return value % divisor < 0 ? quotient - 1 : quotient
    }

    /// Year, month (1–12) and day of the `days`th day since 1970-01-01 (proleptic Gregorian; H. Hinnant's
    /// `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * shiftedMonth + 2) / 5 + 1)
        let month = Int(shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9)
        let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (`days_from_civil`).
    private static func days(fromCivil year: Int, month: Int, day: Int) -> Int64 {
        let marchYear = Int64(month <= 2 ? year - 1 : year)
        let era = floorDivide(marchYear, 400)
        let yearOfEra = marchYear - era * 400
        let shiftedMonth = Int64(month > 2 ? month - 3 : month + 9)
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
