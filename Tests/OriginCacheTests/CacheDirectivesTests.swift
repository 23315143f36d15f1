import Foundation
import HLSCacheTestTraits
import Testing

@testable import OriginCache

/// Origin freshness headers are clamped, never overflowed.
@Suite("Cache directives", .sharedMachine)
struct CacheDirectivesTests {
    @Test("delta-seconds past a year, negative or empty directives are clamped or ignored")
    func clamps() {
        let now = Date(timeIntervalSince1970: 1_000_000)
        let headers = ["cache-control": "=, max-age=99999999999999999999999", "age": "-5"]
        let directives = CacheDirectives { headers[$0] }
        #expect(directives.maxAge == CacheDirectives.maxDeltaSeconds)
        #expect(directives.age == 0)
        #expect(directives.expiry(receivedAt: now) == now.addingTimeInterval(365 * 86_400))
        let far = CacheDirectives { ["expires": "Fri, 31 Dec 9999 23:59:59 GMT"][$0] }
        #expect(far.expiry(receivedAt: now) == now.addingTimeInterval(365 * 86_400))
        #expect(CacheDirectives { ["cache-control": "s-maxage=-1, max-age=10"][$0] }.maxAge == 10)
    }
}
