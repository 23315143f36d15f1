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

    /// The bytes the range means within an object of `length` bytes, or `nil` when it is not satisfiable (it
    /// starts at or past the end, or the range is not valid). A range that runs past the end is clipped to it.
    /// - Parameter length: the object's length.
    /// - Returns: the bytes to send.
    public func resolved(length: Int64) -> ByteRange? {
        guard isValid else { return nil }
        switch self {
        case .closed(let first, let last):
            guard first < length else { return nil }
            return ByteRange(offset: first, length: min(last, length - 1) - first + 1)
        case .from(let first):
            guard first < length else { return nil }
            return ByteRange(offset: first, length: length - first)
        case .suffix(let count):
            guard length > 0 else { return nil }
            let taken = min(count, length)
            return ByteRange(offset: length - taken, length: taken)
        }
    }

    /// A closed range for exactly `range`'s bytes; `nil` for an empty range.
    /// - Parameter range: the bytes.
    public init?(_ range: ByteRange) {
        guard range.length > 0 else { return nil }
        self = .closed(first: range.offset, last: range.upperBound - 1)
    }

    /// The bytes of a closed range (`nil` for open and suffix ranges, whose bytes depend on the object's length).
    public var closedBytes: ByteRange? {
        guard isValid, case .closed(let first, let last) = self else { return nil }
        return ByteRange(offset: first, length: last - first + 1)
    }

    /// Whether the numbers make a range: non-negative, `first <= last < Int64.max`, a positive suffix. Parsed
    /// ranges always are; one built from its cases may not be.
    public var isValid: Bool {
        switch self {
        case .closed(let first, let last): first >= 0 && first <= last && last < .max
        case .from(let first): first >= 0
        case .suffix(let count): count > 0
        }
    }
}

extension RequestedRange: CustomStringConvertible {
    /// The range as written after `bytes=` (libcurl's `CURLOPT_RANGE` form): `0-99`, `100-`, `-500`.
    public var description: String {
        switch self {
        case .closed(let first, let last): "\(first)-\(last)"
        case .from(let first): "\(first)-"
        case .suffix(let count): "-\(count)"
        }
    }

    /// The `Range` header's value: `bytes=0-99`.
    public var headerValue: String { "bytes=" + description }
}
