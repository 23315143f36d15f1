/// A single byte range from a request's `Range` header (RFC 9110 section 14.1.2).
///
/// Every number in it is checked: parsing never traps, whatever the header says, and a range no object could
/// satisfy is answered as RFC 9110 says (clipped to the object, or 416), never by overflowing.
public enum RequestedRange: Hashable, Sendable {
    /// `bytes=a-b`: `first` and `last` inclusive, `first <= last`.
    case closed(first: Int64, last: Int64)
    /// `bytes=a-`
    case from(Int64)
    /// `bytes=-n`, `n > 0`.
    case suffix(Int64)

    /// A closed range longer than this is no object of its own: it is cut from the whole object, like `a-`
    /// (1 TiB, far above any object the cache stores).
    public static let maxClosedLength: Int64 = 1 << 40

    /// Parses a `Range` header: one `bytes` range, else `nil` (multiple ranges, other units and ranges that are not
    /// valid are answered with the whole object, as RFC 9110 allows).
    /// - Parameter header: the header's value.
    public init?(header: String) {
        var text = header
        guard let parsed = text.withUTF8({ Self.parse($0) }) else { return nil }
        self = parsed
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> RequestedRange? {
        var start = 0
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        let unit: [UInt8] = Array("bytes=".utf8)
        guard end - start > unit.count else { return nil }
        for (offset, expected) in unit.enumerated() {
            let byte = bytes[start + offset]
            guard (offset < 5 ? byte | 0x20 : byte) == expected else { return nil }
        }
        start += unit.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        guard let dash = (start..<end).first(where: { bytes[$0] == UInt8(ascii: "-") }) else { return nil }
        let first = HeaderNumber(bytes, start..<dash)
        let last = HeaderNumber(bytes, (dash + 1)..<end)
        switch (first, last) {
        case (.value(let first), .value(let last)):
            guard first <= last else { return nil }
            let (count, overflow) = (last - first).addingReportingOverflow(1)
            return overflow || count > maxClosedLength ? .from(first) : .closed(first: first, last: last)
        case (.value(let first), .empty), (.value(let first), .tooLarge): return .from(first)
        case (.empty, .value(let count)) where count > 0: return .suffix(count)
        case (.empty, .tooLarge): return .suffix(.max)
        default: return nil
        }
    }

    /// The range's offset and length within an object of `length` bytes, or `nil` when it is not satisfiable
    /// (it starts at or past the end). A range that runs past the end is clipped to it.
    /// - Parameter length: the object's length.
    /// - Returns: the offset and length of the bytes to send.
    public func resolved(length: Int64) -> (offset: Int64, length: Int64)? {
        switch self {
        case .closed(let first, let last):
            guard first < length else { return nil }
            return (first, min(last, length - 1) - first + 1)
        case .from(let first):
            guard first < length else { return nil }
            return (first, length - first)
        case .suffix(let count):
            guard length > 0 else { return nil }
            let taken = min(count, length)
            return (length - taken, taken)
        }
    }
}

extension CacheKey {
    /// The cache object a request for `origin` asks for: a closed range `a-b` is an object of its own (an
    /// `EXT-X-BYTERANGE` segment); open and suffix ranges are cut from the whole object.
    /// - Parameters:
    ///   - origin: the origin URL.
    ///   - requested: the request's range, if any.
    public init(origin: String, requested: RequestedRange?) {
        if case .closed(let first, let last) = requested, let range = ByteRange(offset: first, length: last - first + 1)
        {
            self.init(url: origin, range: range)
        } else {
            self.init(url: origin)
        }
    }
}
