import Foundation

/// Byte constants and classes used by the scanners and the URL resolver: inlinable, so that the playlist parser's
/// loops in another target compile them to constants (public: this compiler inlines an `@inlinable package`
/// declaration into no other target).
public enum ASCII {
    /// `\n`.
    @inlinable public static var lf: UInt8 { UInt8(ascii: "\n") }
    /// `\r`.
    @inlinable public static var cr: UInt8 { UInt8(ascii: "\r") }
    /// ` `.
    @inlinable public static var space: UInt8 { UInt8(ascii: " ") }
    /// `\t`.
    @inlinable public static var tab: UInt8 { UInt8(ascii: "\t") }
    /// `#`.
    @inlinable public static var hash: UInt8 { UInt8(ascii: "#") }
    /// `:`.
    @inlinable public static var colon: UInt8 { UInt8(ascii: ":") }
    /// `,`.
    @inlinable public static var comma: UInt8 { UInt8(ascii: ",") }
    /// `=`.
    @inlinable public static var equals: UInt8 { UInt8(ascii: "=") }
    /// `"`.
    @inlinable public static var quote: UInt8 { UInt8(ascii: "\"") }
    /// `/`.
    @inlinable public static var slash: UInt8 { UInt8(ascii: "/") }
    /// `.`.
    @inlinable public static var dot: UInt8 { UInt8(ascii: ".") }
    /// `?`.
    @inlinable public static var question: UInt8 { UInt8(ascii: "?") }
    /// `#`.
    @inlinable public static var numberSign: UInt8 { UInt8(ascii: "#") }
    /// `{`.
    @inlinable public static var openBrace: UInt8 { UInt8(ascii: "{") }
    /// `}`.
    @inlinable public static var closeBrace: UInt8 { UInt8(ascii: "}") }
    /// `$`.
    @inlinable public static var dollar: UInt8 { UInt8(ascii: "$") }

    /// A space or a tab.
    @inlinable @inline(__always) public static func isBlank(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    /// `A`-`Z` or `a`-`z`.
    @inlinable @inline(__always) public static func isAlpha(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    /// `0`-`9`.
    @inlinable @inline(__always) public static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// `[A-Za-z0-9_-]`: the characters of attribute and variable names (lenient about case).
    @inlinable @inline(__always) public static func isNameByte(_ byte: UInt8) -> Bool {
        isAlpha(byte) || isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}

// Public, not `package`: this compiler inlines `@inlinable package` declarations into no other target.
extension UnsafeBufferPointer where Element == UInt8 {
    /// Index of the first `byte` in `range` found with `memchr`, or `range.upperBound`.
    @inlinable @inline(__always) public func index(of byte: UInt8, in range: Range<Int>) -> Int {
        guard !range.isEmpty, let base = baseAddress,
            let found = memchr(base + range.lowerBound, Int32(byte), range.count)
        else { return range.upperBound }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }

    /// Index of the first `byte` in `range`, or `range.upperBound`.
    @inlinable @inline(__always) public func firstIndex(of byte: UInt8, in range: Range<Int>) -> Int {
        var index = range.lowerBound
        while index < range.upperBound, self[index] != byte { index += 1 }
        return index
    }

    /// Whether `needle` occurs at `index`.
    @inlinable @inline(__always) public func matches(_ needle: StaticString, at index: Int, end: Int) -> Bool {
        let length = needle.utf8CodeUnitCount
        guard index + length <= end else { return false }
        let pointer = needle.utf8Start
        for offset in 0..<length where self[index + offset] != pointer[offset] { return false }
        return true
    }
}
