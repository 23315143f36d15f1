import ByteRanges
import Foundation

/// The fixed header at the start of every entry file, before the body.
///
/// Layout (little-endian):
/// ```
///  0  4  magic "HLSC"
///  4  2  version (2)
///  6  2  kind: the filler's tag for what the object is (0: none; was reserved, so older entries read as 0)
///  8  4  header length: the body starts here
/// 12  4  CRC-32 of the header, without this field and the expiry
/// 16  8  body length
/// 24  8  expiry, ms since 1970 (Int64.min: none) — rewritten in place by updateExpiry
/// 32  8  fetched at, ms since 1970
/// 40  2  HTTP status
/// 42  2  flags (bit 0: the key has a range)
/// 44  8  range offset
/// 52  8  range length
/// 60  …  URL, Content-Type, ETag, Last-Modified, complete length (decimal), base URL: each a u32 length
///          (0xFFFFFFFF: absent) and UTF-8 bytes; a header that ends before the base URL (written before it
///          existed) has none
/// ```
/// The full key is stored so that a lookup can tell a hash collision from a hit.
struct EntryHeader: Sendable, Hashable {
    static let magic: [UInt8] = Array("HLSC".utf8)
    static let version: UInt16 = 2
    /// Where the expiry lives, so it can be updated with one 8-byte write.
    static let expiryOffset: Int64 = 24
    /// Bytes before the variable part.
    static let fixedLength = 60
    /// The largest header accepted: a longer URL or ETag is not cached.
    static let maxLength = 64 * 1024
    /// Bytes read at once when a lookup reads a header; most headers fit.
    static let typicalLength = 4096

    var metadata: EntryMetadata
    var bodyLength: Int64

    init(metadata: EntryMetadata, bodyLength: Int64) {
        self.metadata = metadata
        self.bodyLength = bodyLength
    }

    /// The encoded header.
    func encoded() -> [UInt8] {
        var bytes = Self.magic
        bytes.appendLittleEndian(Self.version)
        bytes.appendLittleEndian(UInt16(metadata.kind))
        bytes.appendLittleEndian(UInt32(0))  // header length, set below
        bytes.appendLittleEndian(UInt32(0))  // CRC, set below
        bytes.appendLittleEndian(UInt64(bitPattern: bodyLength))
        bytes.appendLittleEndian(UInt64(bitPattern: metadata.expiry?.millisecondsSince1970 ?? .min))
        bytes.appendLittleEndian(UInt64(bitPattern: metadata.fetchedAt.millisecondsSince1970))
        bytes.appendLittleEndian(UInt16(clamping: metadata.status))
        bytes.appendLittleEndian(UInt16(metadata.key.range == nil ? 0 : 1))
        bytes.appendLittleEndian(UInt64(bitPattern: metadata.key.range?.offset ?? 0))
        bytes.appendLittleEndian(UInt64(bitPattern: metadata.key.range?.length ?? 0))
        let fields = [
            metadata.key.url, metadata.contentType, metadata.etag, metadata.lastModified,
            metadata.completeLength.map { String($0) }, metadata.baseURL,
        ]
        for field in fields {
            guard let field else {
                bytes.appendLittleEndian(UInt32.max)
                continue
            }
            let utf8 = Array(field.utf8)
            bytes.appendLittleEndian(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
        bytes.replaceLittleEndian(UInt32(bytes.count), at: 8)
        bytes.replaceLittleEndian(Self.checksum(bytes), at: 12)
        return bytes
    }

    /// The header's total length, which is where the body starts, read from its first bytes.
    /// - Returns: `nil` when the bytes are not the start of a header this version can read.
    static func length(ofHeaderStartingWith bytes: [UInt8]) -> Int? {
        guard bytes.count >= fixedLength, Array(bytes[0..<4]) == magic,
            bytes.readLittleEndian(UInt16.self, at: 4) == version
        else { return nil }
        let length = Int(bytes.readLittleEndian(UInt32.self, at: 8))
        return (fixedLength...maxLength).contains(length) ? length : nil
    }

    /// Decodes a complete header.
    /// - Returns: `nil` when the bytes are not a valid header (bad magic, version, checksum or fields).
    init?(decoding bytes: [UInt8]) {
        guard let length = Self.length(ofHeaderStartingWith: bytes), bytes.count >= length else { return nil }
        let header = Array(bytes[0..<length])
        guard header.readLittleEndian(UInt32.self, at: 12) == Self.checksum(header) else { return nil }
        let bodyLength = Int64(bitPattern: header.readLittleEndian(UInt64.self, at: 16))
        let expiry = Int64(bitPattern: header.readLittleEndian(UInt64.self, at: 24))
        let fetchedAt = Int64(bitPattern: header.readLittleEndian(UInt64.self, at: 32))
        let kind = UInt8(truncatingIfNeeded: header.readLittleEndian(UInt16.self, at: 6))
        let status = Int(header.readLittleEndian(UInt16.self, at: 40))
        let ranged = header.readLittleEndian(UInt16.self, at: 42) & 1 == 1
        let offset = Int64(bitPattern: header.readLittleEndian(UInt64.self, at: 44))
        let rangeLength = Int64(bitPattern: header.readLittleEndian(UInt64.self, at: 52))
        var cursor = Self.fixedLength
        var fields: [String?] = []
        for index in 0..<6 {
            guard cursor + 4 <= length else {
                guard index == 5 else { return nil }
                fields.append(nil)
                break
            }
            let count = header.readLittleEndian(UInt32.self, at: cursor)
            cursor += 4
            if count == .max {
                fields.append(nil)
                continue
            }
            guard Int(count) <= length - cursor else { return nil }
            fields.append(String(decoding: header[cursor..<cursor + Int(count)], as: UTF8.self))
            cursor += Int(count)
        }
        guard bodyLength >= 0, let url = fields[0] else { return nil }
        var range: ByteRange?
        if ranged {
            guard let decoded = ByteRange(offset: offset, length: rangeLength) else { return nil }
            range = decoded
        }
        self.bodyLength = bodyLength
        self.metadata = EntryMetadata(
            key: CacheKey(url: url, range: range),
            status: status,
            contentType: fields[1],
            contentLength: bodyLength,
            etag: fields[2],
            lastModified: fields[3],
            fetchedAt: Date(millisecondsSince1970: fetchedAt),
            expiry: expiry == .min ? nil : Date(millisecondsSince1970: expiry),
            completeLength: fields[4].flatMap { Int64($0) },
            kind: kind,
            baseURL: fields[5]
        )
    }

    /// The encoded expiry field, for an in-place update.
    static func encodedExpiry(_ expiry: Date?) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendLittleEndian(UInt64(bitPattern: expiry?.millisecondsSince1970 ?? .min))
        return bytes
    }

    /// The expiry field's value, from its 8 bytes (``encodedExpiry(_:)``); `nil` for none or too few bytes.
    static func decodedExpiry(_ bytes: [UInt8]) -> Date? {
        guard bytes.count >= 8 else { return nil }
        let value = Int64(bitPattern: bytes.readLittleEndian(UInt64.self, at: 0))
        return value == .min ? nil : Date(millisecondsSince1970: value)
    }

    /// CRC-32 of everything but the checksum itself and the mutable expiry.
    private static func checksum(_ header: [UInt8]) -> UInt32 {
        var crc = CRC32.update(0, header[0..<12])
        crc = CRC32.update(crc, header[16..<24])
        return CRC32.update(crc, header[32...])
    }
}

extension [UInt8] {
    fileprivate mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    fileprivate mutating func replaceLittleEndian<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        Swift.withUnsafeBytes(of: value.littleEndian) { replaceSubrange(offset..<offset + $0.count, with: $0) }
    }

    fileprivate func readLittleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        var value = T.zero
        for index in (0..<MemoryLayout<T>.size).reversed() { value = value << 8 | T(self[offset + index]) }
        return value
    }
}
