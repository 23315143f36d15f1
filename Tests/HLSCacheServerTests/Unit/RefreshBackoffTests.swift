import HLSCacheTestTraits
import SegmentCache
import Testing

@testable import HLSCacheServer

/// After a failed refresh, the next waits a refresh period; the record of failures stays bounded.
@Suite("Refresh backoff", .sharedMachine)
struct RefreshBackoffTests {
    private let key = CacheKey(url: "https://origin.test/live.m3u8")
    private let start = ContinuousClock.now

    @Test func aFailureHoldsTheNextRefreshBackForItsPeriodOnly() {
        let backoff = RefreshBackoff()
        #expect(backoff.claimRefresh(of: key, now: start))
        backoff.refreshFailed(key, period: .seconds(2), now: start)
        #expect(!backoff.claimRefresh(of: key, now: start + .milliseconds(1999)))
        #expect(backoff.claimRefresh(of: CacheKey(url: "https://origin.test/other.m3u8"), now: start))
        #expect(backoff.claimRefresh(of: key, now: start + .seconds(2)))
        #expect(backoff.count == 0, "a wait that is over is forgotten")
    }

    @Test func aClaimedRefreshHoldsTheOthersBackUntilItEnds() {
        let backoff = RefreshBackoff()
        #expect(backoff.claimRefresh(of: key, now: start))
        #expect(!backoff.claimRefresh(of: key, now: start), "a second poll while the first refresh runs")
        #expect(backoff.claimRefresh(of: CacheKey(url: "https://origin.test/other.m3u8"), now: start))
        backoff.refreshSucceeded(key)
        #expect(backoff.claimRefresh(of: key, now: start))
        backoff.refreshFailed(key, period: .seconds(1), now: start)
        #expect(!backoff.claimRefresh(of: key, now: start + .milliseconds(500)))
        #expect(backoff.claimRefresh(of: key, now: start + .seconds(1)))
    }

    @Test func aSuccessEndsTheWait() {
        let backoff = RefreshBackoff()
        backoff.refreshFailed(key, period: .seconds(2), now: start)
        backoff.refreshSucceeded(key)
        #expect(backoff.claimRefresh(of: key, now: start))
    }

    @Test func theWaitIsALiveManifestsRefreshPeriodWithinBoundsElseOneSecond() {
        #expect(RefreshBackoff.period(isLive: true, liveFreshSeconds: 3) == .seconds(3))
        #expect(RefreshBackoff.period(isLive: true, liveFreshSeconds: 0.1) == .milliseconds(500))
        #expect(RefreshBackoff.period(isLive: true, liveFreshSeconds: 300) == .seconds(10))
        #expect(RefreshBackoff.period(isLive: false, liveFreshSeconds: 3) == .seconds(1))
    }

    @Test func theRecordIsBoundedDroppingWaitsThatAreOverFirst() {
        let backoff = RefreshBackoff()
        for index in 0..<(RefreshBackoff.capacity - 1) {
            backoff.refreshFailed(CacheKey(url: "https://o.test/\(index).m3u8"), period: .seconds(1), now: start)
        }
        backoff.refreshFailed(key, period: .seconds(60), now: start)
        #expect(backoff.count == RefreshBackoff.capacity)
        // Full, two seconds later: the waits that are over go, the one still running stays.
        backoff.refreshFailed(CacheKey(url: "https://o.test/new.m3u8"), period: .seconds(1), now: start + .seconds(2))
        #expect(backoff.count == 2)
        #expect(!backoff.claimRefresh(of: key, now: start + .seconds(2)))
    }
}
