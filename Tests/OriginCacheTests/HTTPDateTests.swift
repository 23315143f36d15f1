import Foundation
import HLSCacheTestTraits
import Testing

@testable import OriginCache

/// HTTP dates written and read by arithmetic agree with `DateFormatter`, and no date, however absurd, traps.
@Suite("HTTP dates", .sharedMachine)
struct HTTPDateTests {
    /// What `DateFormatter` writes for `date` as an IMF-fixdate.
    static func reference(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    @Test("dates from 1900 to 2100, leap days and year ends among them, are written as DateFormatter writes them")
    func formatMatchesDateFormatter() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var seconds: [Int64] = [
            0, -1, 86_399, 951_782_400, 951_868_799, 1_709_164_800, 4_107_542_399, -2_208_988_800, 1_700_000_000,
        ]
        for _ in 0..<500 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            seconds.append(-2_208_988_800 + Int64(state >> 33) % 6_311_433_600)
        }
        for second in seconds {
            let date = Date(timeIntervalSince1970: TimeInterval(second))
            #expect(HTTPDate.format(date) == Self.reference(date), "\(second)")
            #expect(HTTPDate.parse(HTTPDate.format(date)) == date, "\(second)")
        }
    }

    @Test("a fraction of a second is written rounded down")
    func fractionsRoundDown() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 1_700_000_000.999)) == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: -0.5)) == "Wed, 31 Dec 1969 23:59:59 GMT")
    }

    @Test("dates beyond the years 1 to 9999, and NaN, are written as the nearest end (or 1970), never a trap")
    func absurdDatesAreClamped() {
        #expect(HTTPDate.format(.distantFuture) == "Mon, 01 Jan 4001 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 1e300)) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: -1e300)) == "Mon, 01 Jan 0001 00:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: .nan)) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }

    @Test("the obsolete RFC 850 and asctime forms are still read; malformed fixdates are not taken for dates")
    func otherForms() {
        let moment = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == moment)
        #expect(HTTPDate.parse("  Sun, 06 Nov 1994 08:49:37 GMT ") == moment)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == moment)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == moment)
        for malformed in [
            "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 0x Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 UTX", "", "Sun, 06 Nov 1994", "0", "-1",
            "1994-11-06T08:49:37Z",
        ] {
            #expect(HTTPDate.parse(malformed) == nil, "\(malformed)")
        }
    }
}
