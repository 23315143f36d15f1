import ByteRanges

/// The 256-bit name of an entry file: 128 bits that identify the URL, then 128 that identify the range.
///
/// The first half is the first 16 bytes of SHA-256 of the URL; the second half is zero for a whole
/// object, or the first 16 bytes of SHA-256 of the URL and the range for a ranged one. So every
/// ranged entry of a URL shares the URL half, and the directory scan at open learns which
/// entries are ranges of which URL without reading a header. The entry's header stores the full
/// key, which a lookup compares, so a collision can never serve the wrong object.
///
/// SHA-256 rather than a fast non-cryptographic hash: keys come from request input, and with a
/// hash an attacker can invert they could make chosen URLs collide and evict each other.
struct EntryDigest: Hashable, Sendable, CustomStringConvertible {
    /// The URL half.
    let url: URLDigest
    /// The range half, zero for a whole object.
    let rangeHigh: UInt64
    let rangeLow: UInt64

    /// The digest naming `key`'s file.
    init(_ key: CacheKey) {
        url = URLDigest(key.url)
        if let range = key.range {
            var material = Array(key.url.utf8)
            material.append(0)
            material.append(contentsOf: "\(range.offset)+\(range.length)".utf8)
            let hash = SHA256.hash(material)
            let high = UInt64(bigEndianBytes: hash[0..<8])
            let low = UInt64(bigEndianBytes: hash[8..<16])
            // A zero half means "whole object"; a range hashing to zero keeps one bit set.
            (rangeHigh, rangeLow) = high == 0 && low == 0 ? (0, 1) : (high, low)
        } else {
            (rangeHigh, rangeLow) = (0, 0)
        }
    }

    init(url: URLDigest, rangeHigh: UInt64, rangeLow: UInt64) {
        self.url = url
        self.rangeHigh = rangeHigh
        self.rangeLow = rangeLow
    }

    /// Parses the 64 lowercase hexadecimal digits of a file name; `nil` for any other name.
    init?(fileName: some Collection<UInt8>) {
        guard fileName.count == 64 else { return nil }
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        var position = 0
        for byte in fileName {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = byte &- UInt8(ascii: "a") &+ 10
            default: return nil
            }
            switch position / 16 {
            case 0: words.0 = words.0 << 4 | UInt64(value)
            case 1: words.1 = words.1 << 4 | UInt64(value)
            case 2: words.2 = words.2 << 4 | UInt64(value)
            default: words.3 = words.3 << 4 | UInt64(value)
            }
            position += 1
        }
        self.init(url: URLDigest(high: words.0, low: words.1), rangeHigh: words.2, rangeLow: words.3)
    }

    /// Whether the digest names a ranged object.
    var isRanged: Bool { rangeHigh != 0 || rangeLow != 0 }

    /// The 64 hexadecimal digits of the file name.
    var description: String {
        String(unsafeUninitializedCapacity: 64) { buffer in
            writeHex(into: buffer)
            return 64
        }
    }

    /// `ab/c/abc…`: two levels of fan-out (256, then 16: 4,096 leaf directories), then the file,
    /// relative to the cache directory. 256 × 256 would mean 65,536 directories to list at open,
    /// which alone took 1.5 s for 100,000 entries on the development machine; 4,096 took 0.5 s.
    var relativePath: String {
        String(unsafeUninitializedCapacity: 69) { buffer in
            writeHex(into: UnsafeMutableBufferPointer(rebasing: buffer[5...]))
            buffer[0] = buffer[5]
            buffer[1] = buffer[6]
            buffer[2] = UInt8(ascii: "/")
            buffer[3] = buffer[7]
            buffer[4] = UInt8(ascii: "/")
            return 69
        }
    }

    /// Writes the 64 lowercase hexadecimal digits into the first 64 bytes of `buffer`.
    private func writeHex(into buffer: UnsafeMutableBufferPointer<UInt8>) {
        let digits: StaticString = "0123456789abcdef"
        let table = digits.utf8Start
        for (index, word) in [url.high, url.low, rangeHigh, rangeLow].enumerated() {
            for nibble in 0..<16 {
                buffer[index * 16 + nibble] = table[Int((word >> (60 - 4 * UInt64(nibble))) & 0xF)]
            }
        }
    }
}

/// The first 128 bits of SHA-256 of a URL: what all entries of one URL have in common.
struct URLDigest: Hashable, Sendable {
    let high: UInt64
    let low: UInt64

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The digest of `url`.
    init(_ url: String) {
        let hash = SHA256.hash(url.utf8)
        self.init(high: UInt64(bigEndianBytes: hash[0..<8]), low: UInt64(bigEndianBytes: hash[8..<16]))
    }
}

extension UInt64 {
    /// Reads eight bytes, most significant first.
    init(bigEndianBytes bytes: ArraySlice<UInt8>) {
        self = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
