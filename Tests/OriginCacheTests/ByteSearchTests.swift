import HLSCacheTestTraits
import Testing

@testable import OriginCache

/// The byte search that classifies media types and spots blocking reloads finds what `contains(_:)` finds in ASCII.
@Suite("Byte search", .sharedMachine)
struct ByteSearchTests {
    @Test("finds a needle at the start, the middle and the end, in strings and substrings; not a partial one")
    func findsNeedles() {
        #expect("application/vnd.apple.mpegurl".containsBytes(of: "mpegurl"))
        #expect("mpegurl; charset=utf-8".containsBytes(of: "mpegurl"))
        #expect("application/dash+xml".containsBytes(of: "dash+xml"))
        #expect(!"application/dash+xm".containsBytes(of: "dash+xml"))
        #expect(!"video/mp2t".containsBytes(of: "mpegurl"))
        #expect(!"".containsBytes(of: "a"))
        #expect("".containsBytes(of: ""))
        let url = "https://example.com/live.m3u8?_HLS_msn=5&_HLS_part=0"
        #expect(url[url.firstIndex(of: "?")!...].containsBytes(of: "_HLS_msn="))
        #expect(!url[url.firstIndex(of: "?")!...].containsBytes(of: "_HLS_skip="))
        #expect("ééé_HLS_msn=1".containsBytes(of: "_HLS_msn="))
    }

    @Test("agrees with contains(_:) on a thousand ASCII strings and needles")
    func agreesWithContains() {
        var state: UInt64 = 42
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % bound
        }
        let alphabet = Array("ab_=+")
        for _ in 0..<1000 {
            let haystack = String((0..<next(12)).map { _ in alphabet[next(alphabet.count)] })
            let needle = String((0..<(1 + next(3))).map { _ in alphabet[next(alphabet.count)] })
            #expect(haystack.containsBytes(of: needle) == haystack.contains(needle), "\(haystack) \(needle)")
        }
    }
}
