import Foundation

/// Byte constants and classes used by the scanners.
enum ASCII {
    static let lf = UInt8(ascii: "\n")
    static let cr = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
    static let hash = UInt8(ascii: "#")
    static let colon = UInt8(ascii: ":")
    static let comma = UInt8(ascii: ",")
    static let equals = UInt8(ascii: "=")
    static let quote = UInt8(ascii: "\"")
    static let slash = UInt8(ascii: "/")
    static let dot = UInt8(ascii: ".")
    static let question = UInt8(ascii: "?")
    static let numberSign = UInt8(ascii: "#")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let dollar = UInt8(ascii: "$")

    @inline(__always) static func isBlank(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    @inline(__always) static func isAlpha(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }

    @inline(__always) static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// `[A-Za-z0-9_-]`: the characters of attribute and variable names (lenient about case).
    @inline(__always) static func isNameByte(_ byte: UInt8) -> Bool {
        isAlpha(byte) || isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}

extension UnsafeBufferPointer where Element == UInt8 {
    /// Index of the first `byte` in `range` found with `memchr`, or `range.upperBound`.
    @inline(__always) func index(of byte: UInt8, in range: Range<Int>) -> Int {
        guard !range.isEmpty, let base = baseAddress,
            let found = memchr(base + range.lowerBound, Int32(byte), range.count)
        else { return range.upperBound }
        return UnsafeRawPointer(found) - UnsafeRawPointer(base)
    }

    /// Index of the first `byte` in `range`, or `range.upperBound`.
    @inline(__always) func firstIndex(of byte: UInt8, in range: Range<Int>) -> Int {
        var index = range.lowerBound
        while index < range.upperBound, self[index] != byte { index += 1 }
        return index
    }

    /// Whether `needle` occurs at `index`.
    @inline(__always) func matches(_ needle: StaticString, at index: Int, end: Int) -> Bool {
        let length = needle.utf8CodeUnitCount
        guard index + length <= end else { return false }
        let pointer = needle.utf8Start
        for offset in 0..<length where self[index + offset] != pointer[offset] { return false }
        return true
    }
}
