/// One `NAME=VALUE` pair of an attribute list, as written.
public struct Attribute: Sendable, Hashable {
    /// The attribute name as written (`BANDWIDTH`).
    public var name: String
    /// The value, without the quotes of a quoted string.
    public var value: String
    /// Whether the value was a quoted string.
    public var isQuoted: Bool

    /// Creates an attribute.
    /// - Parameters:
    ///   - name: the attribute name.
    ///   - value: the value without quotes.
    ///   - isQuoted: whether the value is written as a quoted string.
    public init(name: String, value: String, isQuoted: Bool) {
        self.name = name
        self.value = value
        self.isQuoted = isQuoted
    }
}

/// A resolution attribute value, `WIDTHxHEIGHT`.
public struct Resolution: Sendable, Hashable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// Creates a resolution.
    /// - Parameters:
    ///   - width: width in pixels.
    ///   - height: height in pixels.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// An ordered attribute list with typed accessors for the value types of RFC 8216bis section 4.2.
///
/// Attributes the typed tags do not know are kept here, in order.
public struct AttributeList: Sendable, Hashable {
    /// The attributes in the order they were written.
    public var attributes: [Attribute]

    /// Creates a list.
    /// - Parameter attributes: the attributes in order.
    public init(_ attributes: [Attribute]) { self.attributes = attributes }

    /// Parses the text after a tag's colon.
    /// - Parameter text: the attribute list text.
    /// - Returns: the list, or `nil` if it is malformed.
    public init?(parsing text: some StringProtocol) {
        var bytes = Array(text.utf8)
        var spans: [AttributeSpan] = []
        let failure = bytes.withUnsafeMutableBufferPointer { buffer in
            AttributeScanner.scan(UnsafeBufferPointer(buffer), 0..<buffer.count, into: &spans)
        }
        guard failure == nil else { return nil }
        self.attributes = spans.map { span in
            Attribute(
                name: String(decoding: bytes[span.nameStart..<span.nameEnd], as: UTF8.self),
                value: String(decoding: bytes[span.valueStart..<span.valueEnd], as: UTF8.self),
                isQuoted: span.isQuoted)
        }
        bytes.removeAll()
    }

    /// The first attribute named `name` (names compare without regard to case).
    public subscript(name: String) -> Attribute? {
        attributes.first { $0.name == name } ?? attributes.first { $0.name.uppercased() == name }
    }

    /// The value of `name` as written (quoted strings without quotes).
    public func string(_ name: String) -> String? { self[name]?.value }

    /// The value of `name` as a decimal-integer (digits only), or `nil` when it does not fit in `Int`.
    public func integer(_ name: String) -> Int? { self[name].flatMap { PlaylistNumbers.decimalInteger($0.value) } }

    /// The value of `name` as a duration: a finite number of seconds in `0...2³² − 1`, else `nil`.
    public func seconds(_ name: String) -> Double? { self[name].flatMap { PlaylistNumbers.seconds($0.value) } }

    /// The value of `name` as a signed duration: a finite number of seconds within ±(2³² − 1), else `nil`.
    public func signedSeconds(_ name: String) -> Double? {
        self[name].flatMap { PlaylistNumbers.signedSeconds($0.value) }
    }

    /// The value of `name` as a decimal-floating-point or signed-decimal-floating-point number.
    public func double(_ name: String) -> Double? {
        self[name].flatMap { Double($0.value.trimmingBlanks()) }
    }

    /// The value of `name` as a decimal-resolution (`1920x1080`, `X` accepted too).
    public func resolution(_ name: String) -> Resolution? {
        guard let value = self[name]?.value else { return nil }
        let parts = value.split(whereSeparator: { $0 == "x" || $0 == "X" })
        guard parts.count == 2, let width = PlaylistNumbers.decimalInteger(parts[0]),
            let height = PlaylistNumbers.decimalInteger(parts[1])
        else { return nil }
        return Resolution(width: width, height: height)
    }

    /// The value of `name` as a hexadecimal-sequence (`0x…`, lowercase accepted), as bytes.
    public func hexadecimal(_ name: String) -> [UInt8]? {
        guard let value = self[name]?.value else { return nil }
        var digits = Substring(value)
        guard digits.hasPrefix("0x") || digits.hasPrefix("0X") else { return nil }
        digits = digits.dropFirst(2)
        if digits.count % 2 == 1 { digits = "0" + digits }
        var result: [UInt8] = []
        result.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            guard let byte = UInt8(digits[index..<next], radix: 16) else { return nil }
            result.append(byte)
            index = next
        }
        return result
    }

    /// The value of `name` as an enumerated-string `YES`/`NO`.
    public func bool(_ name: String) -> Bool? {
        switch self[name]?.value.uppercased() {
        case "YES": return true
        case "NO": return false
        default: return nil
        }
    }

    /// Serializes the list as written: `NAME=VALUE,NAME="VALUE"`.
    public var serialized: String {
        attributes.map { $0.isQuoted ? "\($0.name)=\"\($0.value)\"" : "\($0.name)=\($0.value)" }
            .joined(separator: ",")
    }
}

extension StringProtocol {
    func trimmingBlanks() -> Substring {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return slice
    }
}
