import ByteRanges
import HLSCacheTestTraits
import Testing

@testable import SegmentCache

@Suite("SHA-256", .sharedMachine)
struct SHA256Tests {
    static let vectors: [(message: String, digest: String)] = [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ]

    @Test(arguments: vectors.indices)
    func matchesTheFIPSVectors(index: Int) {
        let (message, digest) = Self.vectors[index]
        #expect(hex(SHA256.hash(message.utf8)) == digest)
    }

    @Test func millionTimesAMatchesItsVector() {
        var hasher = SHA256()
        for _ in 0..<1_000 { hasher.update([UInt8](repeating: UInt8(ascii: "a"), count: 1_000)) }
        #expect(hex(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func digestNamesShareTheURLHalfAndParseBack() {
        let url = "https://origin.test/media.mp4"
        let whole = EntryDigest(CacheKey(url: url))
        let ranged = EntryDigest(CacheKey(url: url, range: ByteRange(offset: 0, length: 100)))
        #expect(!whole.isRanged)
        #expect(ranged.isRanged)
        #expect(whole.url == ranged.url)
        #expect(whole != ranged)
        #expect(EntryDigest(fileName: Array(ranged.description.utf8)) == ranged)
        #expect(EntryDigest(fileName: Array("not a digest".utf8)) == nil)
        let parts = ranged.relativePath.split(separator: "/")
        #expect(parts.map(\.count) == [2, 1, 64])
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
