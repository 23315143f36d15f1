import ByteRanges
import Foundation
import HLSCacheTestTraits
import Testing

@testable import SegmentCache

@Suite("Entry header", .sharedMachine)
struct EntryHeaderTests {
    static let metadata = EntryMetadata(
        key: CacheKey(url: "https://origin.test/a/b.ts?token=é", range: ByteRange(offset: 1_024, length: 4_096)),
        status: 206,
        contentType: "video/mp2t",
        contentLength: 4_096,
        etag: "\"abc\"",
        lastModified: nil,
        fetchedAt: Date(timeIntervalSince1970: 1_750_000_000.123),
        expiry: Date(timeIntervalSince1970: 1_750_000_060)
    )

    @Test func roundTrips() throws {
        let header = EntryHeader(metadata: Self.metadata, bodyLength: 4_096)
        let bytes = header.encoded()
        #expect(EntryHeader.length(ofHeaderStartingWith: bytes) == bytes.count)
        let decoded = try #require(EntryHeader(decoding: bytes))
        #expect(decoded == header)
    }

    @Test func anyFlippedByteOutsideTheExpiryIsDetected() {
        let bytes = EntryHeader(metadata: Self.metadata, bodyLength: 4_096).encoded()
        for index in bytes.indices where !(24..<32).contains(index) {
            var corrupt = bytes
            corrupt[index] ^= 0x40
            #expect(EntryHeader(decoding: corrupt) == nil, "byte \(index)")
        }
    }

    @Test func expiryIsRewrittenInPlace() throws {
        var bytes = EntryHeader(metadata: Self.metadata, bodyLength: 4_096).encoded()
        let newExpiry = Date(timeIntervalSince1970: 1_760_000_000)
        bytes.replaceSubrange(24..<32, with: EntryHeader.encodedExpiry(newExpiry))
        #expect(try #require(EntryHeader(decoding: bytes)).metadata.expiry == newExpiry)
        bytes.replaceSubrange(24..<32, with: EntryHeader.encodedExpiry(nil))
        #expect(try #require(EntryHeader(decoding: bytes)).metadata.expiry == nil)
    }

    @Test("a stored time is rounded down, so an answer fresh for 0 s is stale at once; whole milliseconds round-trip")
    func storedTimesNeverRunLate() throws {
        for fraction in [0.000_4, 0.000_6, 0.000_999] {
            let expiry = Date(timeIntervalSince1970: 1_750_000_000.123 + fraction)
            let stored = try #require(EntryHeader.decodedExpiry(EntryHeader.encodedExpiry(expiry)))
            #expect(stored <= expiry, "\(fraction)")
            #expect(expiry.timeIntervalSince(stored) < 0.001, "\(fraction)")
        }
        for milliseconds: Int64 in [0, 1, 1_750_000_000_123, 1_750_000_000_999, 4_102_444_800_001] {
            #expect(Date(millisecondsSince1970: milliseconds).millisecondsSince1970 == milliseconds)
        }
    }

    @Test func indexSnapshotRoundTripsAndRejectsCorruption() throws {
        let entries = (0..<3).map {
            ScannedEntry(digest: EntryDigest(CacheKey(url: "https://o/\($0)")), size: Int64($0 * 100), lastAccess: 7)
        }
        let bytes = IndexSnapshot.encode(entries)
        let decoded = try #require(IndexSnapshot.decode(bytes))
        #expect(decoded.map(\.digest) == entries.map(\.digest))
        #expect(decoded.map(\.size) == [0, 100, 200])
        var corrupt = bytes
        corrupt[30] ^= 1
        #expect(IndexSnapshot.decode(corrupt) == nil)
        #expect(IndexSnapshot.decode(Array(bytes.dropLast())) == nil)
    }

    @Test("the base URL of a redirected manifest is kept; a header written before that field existed has none")
    func baseURLRoundTripsAndIsOptional() throws {
        var metadata = Self.metadata
        metadata.baseURL = "https://cdn.test/moved/b.m3u8"
        let decoded = try #require(EntryHeader(decoding: EntryHeader(metadata: metadata, bodyLength: 4_096).encoded()))
        #expect(decoded.metadata.baseURL == "https://cdn.test/moved/b.m3u8")
        // The older layout: five fields, the header's length and checksum made for them.
        var old = Array(EntryHeader(metadata: Self.metadata, bodyLength: 4_096).encoded().dropLast(4))
        withUnsafeBytes(of: UInt32(old.count).littleEndian) { old.replaceSubrange(8..<12, with: $0) }
        var crc = CRC32.update(0, old[0..<12])
        crc = CRC32.update(crc, old[16..<24])
        crc = CRC32.update(crc, old[32...])
        withUnsafeBytes(of: crc.littleEndian) { old.replaceSubrange(12..<16, with: $0) }
        let legacy = try #require(EntryHeader(decoding: old))
        #expect(legacy.metadata.baseURL == nil && legacy.metadata.key == Self.metadata.key)
    }
}
