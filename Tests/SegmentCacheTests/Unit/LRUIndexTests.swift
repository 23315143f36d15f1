import HLSCacheTestTraits
import Testing

@testable import SegmentCache

@Suite("LRU index", .sharedMachine)
struct LRUIndexTests {
    static func digest(_ index: Int) -> EntryDigest { EntryDigest(CacheKey(url: "https://o/\(index)")) }

    @Test func evictsInLeastRecentlyUsedOrderAndCountsBytes() {
        var index = LRUIndex()
        for number in 0..<5 { index.insert(Self.digest(number), size: 10, lastAccess: Int64(number)) }
        #expect(index.totalBytes == 50)
        index.touch(Self.digest(0), at: 10)
        #expect(index.leastRecentlyUsed { _ in true } == Self.digest(1))
        #expect(index.leastRecentlyUsed { $0 != Self.digest(1) } == Self.digest(2))
        #expect(index.remove(Self.digest(1)) == 10)
        #expect(index.totalBytes == 40)
        #expect(index.count == 4)
        index.insert(Self.digest(2), size: 30, lastAccess: 11)  // replaced: bigger, most recent
        #expect(index.totalBytes == 60)
        #expect(index.leastRecentlyUsed { _ in true } == Self.digest(3))
    }

    @Test func scannedEntriesAreOrderedByLastAccessAndFoundOnesByAge() {
        let scanned = [5, 1, 3].map { ScannedEntry(digest: Self.digest($0), size: 1, lastAccess: Int64($0)) }
        var index = LRUIndex(scanned: scanned)
        #expect(index.leastRecentlyUsed { _ in true } == Self.digest(1))
        index.insertByAge(Self.digest(2), size: 1, lastAccess: 2)
        index.remove(Self.digest(1))
        #expect(index.leastRecentlyUsed { _ in true } == Self.digest(2))
        index.insertByAge(Self.digest(0), size: 1, lastAccess: 0)
        #expect(index.leastRecentlyUsed { _ in true } == Self.digest(0))
    }
}
