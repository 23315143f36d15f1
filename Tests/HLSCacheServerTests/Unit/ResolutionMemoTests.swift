import HLSCacheTestTraits
import HTTPTypes
import RequestHeads
import SegmentCache
import Testing

@testable import HLSCacheServer

/// The hit path's memo of resolutions gives what resolving again would, for the server it belongs to only.
@Suite("Resolution memo", .sharedMachine)
struct ResolutionMemoTests {
    private static func request(
        _ target: String, method: HTTPRequest.Method = .get, range: String? = nil
    ) -> ExchangeRequest {
        ExchangeRequest(
            method: method, target: target, origin: nil, range: range, via: nil, accessControlRequestHeaders: nil,
            readAhead: nil, closes: false)
    }

    private static func url(_ resolution: RequestResolution) -> String? {
        if case .origin(let resolved) = resolution { return resolved.url }
        return nil
    }

    @Test("a remembered resolution is the one made again, for the same server; another server resolves afresh")
    func memoFollowsItsServer() throws {
        let forward = try RequestResolutionTests.components()
        let reverse = try RequestResolutionTests.components { $0.reverseOrigin = "https://origin.test" }
        let target = "/live/index.m3u8"
        // Forward mode has no origin in this target; reverse mode maps it to its origin.
        for _ in 0..<2 {
            #expect(Self.url(ResolutionMemo.remembered(Self.request(target), components: forward).resolution) == nil)
            #expect(
                Self.url(ResolutionMemo.remembered(Self.request(target), components: reverse).resolution)
                    == "https://origin.test/live/index.m3u8")
        }
        let proxied = "/o/https/cdn.test/a.ts"
        let first = ResolutionMemo.remembered(Self.request(proxied), components: forward).resolution
        let again = ResolutionMemo.remembered(Self.request(proxied), components: forward).resolution
        #expect(Self.url(first) == "https://cdn.test/a.ts" && Self.url(again) == Self.url(first))
    }

    @Test("a ranged request and another method are resolved for themselves")
    func rangeAndMethodAreNotShared() throws {
        let components = try RequestResolutionTests.components()
        let target = "/o/https/cdn.test/b.ts"
        _ = ResolutionMemo.remembered(Self.request(target), components: components)
        guard
            case .origin(let ranged) = ResolutionMemo.remembered(
                Self.request(target, range: "bytes=0-9"), components: components
            ).resolution
        else {
            Issue.record("not an origin request")
            return
        }
        #expect(ranged.key.range != nil)
        guard
            case .refused(let status, _) = ResolutionMemo.remembered(
                Self.request(target, method: .post), components: components
            ).resolution
        else {
            Issue.record("a POST was not refused")
            return
        }
        #expect(status == .methodNotAllowed)
    }

    @Test("a target past the server's length limit is resolved (refused) but never kept")
    func longTargetsAreNotKept() throws {
        let components = try RequestResolutionTests.components()
        let long = "/o/https/cdn.test/" + String(repeating: "a", count: components.configuration.maxRequestTargetLength)
        let first = ResolutionMemo.remembered(Self.request(long), components: components)
        let again = ResolutionMemo.remembered(Self.request(long), components: components)
        #expect(first !== again, "a long target was kept")
        guard case .refused(let status, _) = first.resolution else {
            Issue.record("a long target is refused")
            return
        }
        #expect(status == .uriTooLong)
        let short = ResolutionMemo.remembered(Self.request("/o/https/cdn.test/b.ts"), components: components)
        #expect(short === ResolutionMemo.remembered(Self.request("/o/https/cdn.test/b.ts"), components: components))
    }
}
