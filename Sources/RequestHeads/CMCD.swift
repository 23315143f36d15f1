/// Common Media Client Data (CTA-5004): what a player reports with each request, as one dictionary in RFC 8941's
/// structured-field syntax. Players send it as the `CMCD` query parameter (percent-encoded: hls.js, dash.js, Shaka,
/// video.js) or as the `CMCD-Request`, `CMCD-Object`, `CMCD-Status` and `CMCD-Session` headers (Media3, AVPlayer);
/// both read here, by one parser with limits. Hostile input is an ``Invalid`` value, never a trap.
package struct CMCD: Sendable, Equatable {
    /// A member's value.
    package enum Value: Sendable, Equatable {
        case integer(Int64)
        case decimal(Double)
        case string(String)
        case token(String)
        case boolean(Bool)
        /// An inner list (CMCD v2): its items.
        case list([Value])
        /// A byte sequence (`:base64:`), kept as written.
        case bytes(String)
    }

    /// A dictionary member.
    package struct Member: Sendable, Equatable {
        package var key: String
        package var value: Value
    }

    /// Why a CMCD field was ignored.
    package enum Invalid: Error, Equatable {
        /// Longer than ``maxFieldBytes``.
        case tooLong
        /// More than ``maxKeys`` members.
        case tooManyKeys
        /// A key given twice (within a field, or across the headers).
        case duplicateKey(String)
        /// Not a dictionary of RFC 8941: the byte offset where it stops being one.
        case syntax(at: Int)
    }

    /// The longest field read, in bytes (as sent; a query's before percent-decoding).
    package static let maxFieldBytes = 4096
    /// The most members read.
    package static let maxKeys = 64

    /// The members, in order.
    package private(set) var members: [Member] = []

    /// No member.
    package init() {}

    /// The data of a `CMCD` query parameter's value, as it appears in the request target (percent-encoded).
    /// - Throws: ``Invalid``.
    package init(query value: Substring) throws(Invalid) {
        guard value.utf8.count <= Self.maxFieldBytes else { throw .tooLong }
        guard let decoded = Self.percentDecoded(value.utf8) else { throw .syntax(at: 0) }
        try read(decoded)
    }

    /// The data of the `CMCD-*` headers, their values joined with `,` (each is a dictionary, and so is their
    /// union: a key in two of them is a duplicate).
    /// - Throws: ``Invalid``.
    package init(headers value: String) throws(Invalid) {
        guard value.utf8.count <= Self.maxFieldBytes else { throw .tooLong }
        try read(Array(value.utf8))
    }

    /// The value of `key`, if present.
    package subscript(key: String) -> Value? { members.first { $0.key == key }?.value }

    /// An integer member (`bl`, `br`, `mtp`, `d`, …), if present as one.
    package func integer(_ key: String) -> Int64? {
        if case .integer(let value) = self[key] { return value }
        return nil
    }

    /// A string member (`sid`, `cid`, `nor`, `nrr`, …), if present as one.
    package func string(_ key: String) -> String? {
        if case .string(let value) = self[key] { return value }
        return nil
    }

    /// A token member (`ot`, `sf`, `st`, …), if present as one.
    package func token(_ key: String) -> String? {
        if case .token(let value) = self[key] { return value }
        return nil
    }

    /// Whether a boolean member (`bs`, `su`) is present and true.
    package func flag(_ key: String) -> Bool {
        if case .boolean(true) = self[key] { return true }
        return false
    }

    // MARK: - Parsing (RFC 8941 section 4.2.2, dictionaries)

    private mutating func read(_ bytes: [UInt8]) throws(Invalid) {
        var parser = Parser(bytes: bytes)
        parser.skipSpaces()
        if parser.atEnd { return }
        while true {
            let key = try parser.key()
            let value: Value
            if parser.peek == UInt8(ascii: "=") {
                parser.index += 1
                value = try parser.itemOrInnerList()
            } else {
                value = .boolean(true)
                try parser.skipParameters()
            }
            guard !members.contains(where: { $0.key == key }) else { throw .duplicateKey(key) }
            guard members.count < Self.maxKeys else { throw .tooManyKeys }
            members.append(Member(key: key, value: value))
            parser.skipOptionalWhitespace()
            if parser.atEnd { return }
            guard parser.peek == UInt8(ascii: ",") else { throw .syntax(at: parser.index) }
            parser.index += 1
            parser.skipOptionalWhitespace()
            // A trailing comma is not a dictionary.
            guard !parser.atEnd else { throw .syntax(at: parser.index) }
        }
    }

    /// Percent-decodes a query value (`%3D` → `=`); `nil` for a malformed escape.
    private static func percentDecoded(_ bytes: Substring.UTF8View) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                output.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            output.append(high << 4 | low)
        }
        return output
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A cursor over a field's bytes.
    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        var atEnd: Bool { index >= bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpaces() {
            while let byte = peek, byte == UInt8(ascii: " ") { index += 1 }
        }

        mutating func skipOptionalWhitespace() {
            while let byte = peek, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { index += 1 }
        }

        /// `( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )`
        mutating func key() throws(Invalid) -> String {
            let start = index
            guard let first = peek, Self.isLowercase(first) || first == UInt8(ascii: "*") else {
                throw .syntax(at: index)
            }
            index += 1
            while let byte = peek,
                Self.isLowercase(byte) || Self.isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "*")
            {
                index += 1
            }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func itemOrInnerList() throws(Invalid) -> Value {
            guard peek == UInt8(ascii: "(") else {
                let item = try bareItem()
                try skipParameters()
                return item
            }
            index += 1
            var items: [Value] = []
            while true {
                skipSpaces()
                guard let byte = peek else { throw .syntax(at: index) }
                if byte == UInt8(ascii: ")") {
                    index += 1
                    try skipParameters()
                    return .list(items)
                }
                guard items.count < CMCD.maxKeys else { throw .tooManyKeys }
                items.append(try bareItem())
                try skipParameters()
                guard let next = peek, next == UInt8(ascii: " ") || next == UInt8(ascii: ")") else {
                    throw .syntax(at: index)
                }
            }
        }

        /// Parameters (`;key=value`) are read and dropped: CMCD gives them no meaning.
        mutating func skipParameters() throws(Invalid) {
            while peek == UInt8(ascii: ";") {
                index += 1
                skipSpaces()
                _ = try key()
                if peek == UInt8(ascii: "=") {
                    index += 1
                    _ = try bareItem()
                }
            }
        }

        mutating func bareItem() throws(Invalid) -> Value {
            guard let byte = peek else { throw .syntax(at: index) }
            switch byte {
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            case UInt8(ascii: "\""): return try string()
            case UInt8(ascii: "?"):
                guard index + 1 < bytes.count else { throw .syntax(at: index) }
                let value = bytes[index + 1]
                guard value == UInt8(ascii: "0") || value == UInt8(ascii: "1") else { throw .syntax(at: index + 1) }
                index += 2
                return .boolean(value == UInt8(ascii: "1"))
            case UInt8(ascii: ":"):
                let start = index
                index += 1
                while let next = peek, next != UInt8(ascii: ":") {
                    guard Self.isBase64(next) else { throw .syntax(at: index) }
                    index += 1
                }
                guard peek == UInt8(ascii: ":") else { throw .syntax(at: index) }
                index += 1
                return .bytes(String(decoding: bytes[start..<index], as: UTF8.self))
            default:
                guard Self.isAlpha(byte) || byte == UInt8(ascii: "*") else { throw .syntax(at: index) }
                let start = index
                index += 1
                while let next = peek, Self.isTokenByte(next) { index += 1 }
                return .token(String(decoding: bytes[start..<index], as: UTF8.self))
            }
        }

        /// An integer (at most 15 digits) or a decimal (at most 12 digits, a dot, 1 to 3 digits).
        mutating func number() throws(Invalid) -> Value {
            let start = index
            var negative = false
            if peek == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            var integer: Int64 = 0
            var digits = 0
            while let byte = peek, Self.isDigit(byte) {
                digits += 1
                guard digits <= 15 else { throw .syntax(at: index) }
                integer = integer * 10 + Int64(byte - UInt8(ascii: "0"))
                index += 1
            }
            guard digits > 0 else { throw .syntax(at: index) }
            guard peek == UInt8(ascii: ".") else { return .integer(negative ? -integer : integer) }
            guard digits <= 12 else { throw .syntax(at: index) }
            index += 1
            var fraction = 0
            var scale = 1.0
            var fractionValue = 0.0
            while let byte = peek, Self.isDigit(byte) {
                fraction += 1
                guard fraction <= 3 else { throw .syntax(at: index) }
                scale /= 10
                fractionValue += Double(byte - UInt8(ascii: "0")) * scale
                index += 1
            }
            guard fraction > 0 else { throw .syntax(at: start) }
            let value = Double(integer) + fractionValue
            return .decimal(negative ? -value : value)
        }

        /// A quoted string: printable ASCII, `\"` and `\\` escapes.
        mutating func string() throws(Invalid) -> Value {
            index += 1
            var output: [UInt8] = []
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return .string(String(decoding: output, as: UTF8.self))
                case UInt8(ascii: "\\"):
                    guard let escaped = peek, escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") else {
                        throw .syntax(at: index)
                    }
                    output.append(escaped)
                    index += 1
                case 0x20...0x7E: output.append(byte)
                default: throw .syntax(at: index - 1)
                }
            }
            throw .syntax(at: index)
        }

        static func isLowercase(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }
        static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        static func isAlpha(_ byte: UInt8) -> Bool { isLowercase(byte | 0x20) }

        /// RFC 9110's `tchar`, `:` and `/`.
        static func isTokenByte(_ byte: UInt8) -> Bool {
            if isAlpha(byte) || isDigit(byte) { return true }
            switch byte {
            case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
                UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"),
                UInt8(ascii: ":"), UInt8(ascii: "/"):
                return true
            default: return false
            }
        }

        static func isBase64(_ byte: UInt8) -> Bool {
            isAlpha(byte) || isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
                || byte == UInt8(ascii: "=")
        }
    }
}

/// The `CMCD` query parameter of a request target: taken out, so that no cache key, origin request or page ever
/// sees it (it changes with every request a player makes).
package enum CMCDQuery {
    /// The target without its `CMCD` parameters, and the value of the last of them (as written, percent-encoded).
    /// A target with none is returned as it is, after one scan of its query's bytes.
    package static func split(_ target: String) -> (target: String, value: Substring?) {
        let utf8 = target.utf8
        guard let question = utf8.firstIndex(of: UInt8(ascii: "?")), mayContainParameter(utf8[question...]) else {
            return (target, nil)
        }
        // Over the bytes: a player's every request passes here.
        var kept: [UInt8] = []
        kept.reserveCapacity(utf8.count)
        kept.append(contentsOf: utf8[..<question])
        var value: Range<String.Index>?
        var keptParameters = 0
        var start = utf8.index(after: question)
        while true {
            let end = utf8[start...].firstIndex(of: UInt8(ascii: "&")) ?? utf8.endIndex
            let parameter = utf8[start..<end]
            if parameter.starts(with: name), parameter.count == 4 || parameter.dropFirst(4).first == UInt8(ascii: "=") {
                value = (parameter.count == 4 ? end : utf8.index(start, offsetBy: 5))..<end
            } else {
                kept.append(keptParameters == 0 ? UInt8(ascii: "?") : UInt8(ascii: "&"))
                kept.append(contentsOf: parameter)
                keptParameters += 1
            }
            guard end < utf8.endIndex else { break }
            start = utf8.index(after: end)
        }
        guard let value else { return (target, nil) }
        // Nothing but empty parameters left (`?CMCD=…&`): no query, as the player's URL without CMCD had none.
        if kept.dropFirst(utf8.distance(from: utf8.startIndex, to: question)).allSatisfy({
            $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "&")
        }) {
            kept.removeLast(kept.count - utf8.distance(from: utf8.startIndex, to: question))
        }
        return (String(decoding: kept, as: UTF8.self), target[value])
    }

    /// `CMCD`.
    private static let name: [UInt8] = Array("CMCD".utf8)

    /// Whether `CMCD` occurs in the bytes: without it, nothing to take out.
    private static func mayContainParameter(_ bytes: Substring.UTF8View.SubSequence) -> Bool {
        var window: UInt32 = 0
        for byte in bytes {
            window = window << 8 | UInt32(byte)
            if window == 0x434D_4344 { return true }  // CMCD
        }
        return false
    }
}

/// The CMCD a request carries (the query parameter's value, or the `CMCD-*` headers' values joined), read once,
/// where the request is read.
package struct CMCDReport: Sendable, Equatable {
    /// How the player sent it.
    package enum Mode: Sendable, Equatable {
        case query
        case headers
    }

    /// How the player sent it.
    package var mode: Mode
    /// The data, or why it is ignored.
    package var data: Result<CMCD, CMCD.Invalid>

    /// The report of a `CMCD` query parameter's value.
    package init(query value: Substring) {
        mode = .query
        data = Result { () throws(CMCD.Invalid) in try CMCD(query: value) }
    }

    /// The report of the `CMCD-*` headers' values, joined with `,`.
    package init(headers value: String) {
        mode = .headers
        data = Result { () throws(CMCD.Invalid) in try CMCD(headers: value) }
    }
}
