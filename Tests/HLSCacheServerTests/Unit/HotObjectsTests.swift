import Foundation
import HLSCacheTestTraits
import NIOCore
import SegmentCache
import Testing

@testable import HLSCacheServer

/// The in-memory tier for small hot objects, on its own.
@Suite("In-memory tier for small objects", .sharedMachine)
struct HotObjectsTests {
    static func metadata(_ url: String, length: Int, fetchedAt: Date = Date(timeIntervalSince1970: 1)) -> EntryMetadata
    {
        EntryMetadata(key: CacheKey(url: url), status: 200, contentLength: Int64(length), fetchedAt: fetchedAt)
    }

    static func buffer(_ length: Int, fill: UInt8 = 7) -> ByteBuffer {
        ByteBuffer(bytes: [UInt8](repeating: fill, count: length))
    }

    @Test("keeps admitted objects and gives them back only for the same version of the entry")
    func sameVersionOnly() {
        let hot = HotObjects(maxBytes: 1 << 20)
        let meta = Self.metadata("http://o/a.key", length: 16)
        hot.keep(Self.buffer(16), for: meta)
        #expect(hot.buffer(for: meta)?.readableBytes == 16)
        #expect(hot.buffer(for: Self.metadata("http://o/a.key", length: 17)) == nil)
        #expect(
            hot.buffer(for: Self.metadata("http://o/a.key", length: 16, fetchedAt: Date(timeIntervalSince1970: 2)))
                == nil)
        #expect(hot.buffer(for: Self.metadata("http://o/b.key", length: 16)) == nil)
    }

    @Test("admits objects up to an eighth of the budget and at most 64 KiB")
    func admission() {
        let hot = HotObjects(maxBytes: 800)
        #expect(hot.admits(100) && !hot.admits(101) && !hot.admits(0))
        hot.keep(Self.buffer(101), for: Self.metadata("http://o/big", length: 101))
        #expect(hot.usage.objects == 0)
        let large = HotObjects(maxBytes: 1 << 30)
        #expect(large.maxObjectBytes == 64 << 10)
        #expect(large.admits(64 << 10) && !large.admits((64 << 10) + 1))
    }

    @Test("stays within its bound under churn, and an object used since the last pass survives eviction")
    func boundAndSecondChance() {
        let hot = HotObjects(maxBytes: 1000)
        let favourite = Self.metadata("http://o/fav", length: 100)
        hot.keep(Self.buffer(100), for: favourite)
        for index in 0..<200 {
            _ = hot.buffer(for: favourite)
            hot.keep(Self.buffer(100), for: Self.metadata("http://o/\(index)", length: 100))
            #expect(hot.usage.bytes <= 1000)
        }
        #expect(hot.buffer(for: favourite) != nil)
        #expect(hot.usage.objects == 10)
    }
}
