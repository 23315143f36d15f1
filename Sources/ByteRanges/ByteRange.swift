/// A contiguous run of bytes inside an origin object: where it starts and how many bytes it has.
///
/// An `EXT-X-BYTERANGE` segment is addressed by its URL and a `ByteRange`; HTTP `Range`
/// requests served from a cached object are expressed as one too.
public struct ByteRange: Hashable, Sendable, CustomStringConvertible {
    /// The offset of the first byte, from the start of the object.
    public let offset: Int64
    /// The number of bytes.
    public let length: Int64

    /// Creates a range, or returns `nil` when it is negative or its end overflows.
    /// - Parameters:
    ///   - offset: the offset of the first byte, at least 0.
    ///   - length: the number of bytes, at least 0.
    public init?(offset: Int64, length: Int64) {
        guard offset >= 0, length >= 0, offset <= Int64.max - length else { return nil }
        self.offset = offset
        self.length = length
    }

    /// The offset just past the last byte.
    public var upperBound: Int64 { offset + length }

    /// Whether every byte of `other` lies inside this range.
    /// - Parameter other: the range to test.
    /// - Returns: `true` when `other` starts at or after this range and ends at or before it.
    public func contains(_ other: ByteRange) -> Bool {
        other.offset >= offset && other.upperBound <= upperBound
    }

    /// `offset+length`, for log lines: `1024+512` is 512 bytes from offset 1024.
    public var description: String { "\(offset)+\(length)" }
}
