import ByteRanges
import HLSCacheTestTraits
import OriginCache
import SegmentCache
import Testing

@Suite("Cache keys that ignore query parameters", .sharedMachine)
struct CacheKeyPolicyTests {
    static func policy(_ segments: [String], manifests: [String] = []) throws -> CacheKeyPolicy {
        CacheKeyPolicy(
            ignoredQuery: try segments.map { try QueryNamePattern($0) },
            ignoredManifestQuery: try manifests.map { try QueryNamePattern($0) })
    }

    @Test("a named parameter leaves the key while the fetch keeps the full URL; other parameters keep their order")
    func namedParameterLeavesTheKey() throws {
        let policy = try Self.policy(["token"])
        let key = policy.key(for: "https://cdn.test/a/seg1.ts?b=2&token=viewer1&a=1")
        #expect(key.url == "https://cdn.test/a/seg1.ts?b=2&a=1")
        #expect(key.fetchURL == "https://cdn.test/a/seg1.ts?b=2&token=viewer1&a=1")
        #expect(key == policy.key(for: "https://cdn.test/a/seg1.ts?b=2&token=viewer2&a=1"))
        #expect(key.hashValue == policy.key(for: "https://cdn.test/a/seg1.ts?b=2&token=viewer2&a=1").hashValue)
        #expect(key != policy.key(for: "https://cdn.test/a/seg1.ts?b=3&token=viewer1&a=1"))
        #expect(policy.key(for: "https://cdn.test/seg1.ts?token=x").url == "https://cdn.test/seg1.ts")
        #expect(policy.key(for: "https://cdn.test/seg1.ts?tokens=x").url == "https://cdn.test/seg1.ts?tokens=x")
    }

    @Test("* patterns match any run of characters; names are compared case-sensitively")
    func wildcardPatterns() throws {
        let policy = try Self.policy(["X-Amz-*", "*sig*"])
        let url = "https://cdn.test/seg.m4s?X-Amz-Date=1&X-Amz-Signature=2&keysig=3&x-amz-other=4&id=5"
        #expect(policy.identity(of: url) == "https://cdn.test/seg.m4s?x-amz-other=4&id=5")
        let everything = try Self.policy(["*"])
        #expect(everything.identity(of: "https://cdn.test/seg.ts?a=1&b") == "https://cdn.test/seg.ts")
    }

    @Test("manifests follow their own list, and LL-HLS directives are never dropped")
    func manifestsHaveTheirOwnList() throws {
        let segmentsOnly = try Self.policy(["token"])
        #expect(segmentsOnly.identity(of: "https://cdn.test/live.m3u8?token=a") == "https://cdn.test/live.m3u8?token=a")
        #expect(segmentsOnly.identity(of: "https://cdn.test/a.mpd?token=a") == "https://cdn.test/a.mpd?token=a")
        let both = try Self.policy(["token"], manifests: ["*"])
        #expect(
            both.identity(of: "https://cdn.test/live.m3u8?token=a&_HLS_msn=4&_HLS_part=1")
                == "https://cdn.test/live.m3u8?_HLS_msn=4&_HLS_part=1")
    }

    @Test("without patterns every key is the whole URL, ranges included")
    func noPatternsKeepWholeURLs() throws {
        let policy = CacheKeyPolicy()
        #expect(policy.keepsWholeURLs)
        let key = policy.key(for: "https://cdn.test/media.ts?token=a", range: ByteRange(offset: 10, length: 5))
        #expect(key.url == "https://cdn.test/media.ts?token=a" && key.fetchURL == key.url)
        #expect(key.range == ByteRange(offset: 10, length: 5))
    }

    @Test("patterns with query syntax in them are refused with what to give instead")
    func malformedPatternsAreRefused() {
        for text in ["", "a=b", "a&b", "a b", "?x"] {
            #expect(throws: InvalidQueryNamePattern.self) { try QueryNamePattern(text) }
        }
        #expect((try? QueryNamePattern("token"))?.description == "token")
    }
}
