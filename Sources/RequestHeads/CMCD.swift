import HTTPTypes

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
        package var value: Value
        /// The key's bytes as a number, for a key of at most 8 bytes (every key CTA-5004 defines); 0 for a longer one.
        var code: UInt64
        /// A longer key (no number holds it).
        var longKey: String?

        /// The key.
        package var key: String {
            if let longKey { return longKey }
            var bytes: [UInt8] = []
            var code = code
            while code != 0 {
                bytes.append(UInt8(truncatingIfNeeded: code))
                code >>= 8
            }
            return String(decoding: bytes, as: UTF8.self)
        }
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
    /// A bit for each member's key number (``bit(_:)``): a key whose bit is clear is absent, with no search of the
    /// members (a player's request looks up a dozen keys, several of them absent).
    private var present: UInt64 = 0

    /// No member.
    package init() {}

    /// The data of a `CMCD` query parameter's value, as it appears in the request target (percent-encoded).
    /// - Throws: ``Invalid``.
    package init(query value: Substring) throws(Invalid) {
        let utf8 = value.utf8
        guard utf8.count <= Self.maxFieldBytes else { throw .tooLong }
        // Decoded on the stack: a player's every request comes here.
        let result = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(1, utf8.count)) {
            buffer -> Result<CMCD, Invalid> in
            let decoded =
                utf8.withContiguousStorageIfAvailable { Self.percentDecode($0, into: buffer) }
                ?? Self.percentDecode(Array(utf8), into: buffer)
            guard let count = decoded else { return .failure(.syntax(at: 0)) }
            var cmcd = CMCD()
            do throws(Invalid) {
                try cmcd.read(UnsafeBufferPointer(rebasing: buffer[..<count]))
            } catch {
                return .failure(error)
            }
            return .success(cmcd)
        }
        self = try result.get()
    }

    /// The data of the `CMCD-*` headers, their values joined with `,` (each is a dictionary, and so is their
    /// union: a key in two of them is a duplicate).
    /// - Throws: ``Invalid``.
    package init(headers value: String) throws(Invalid) {
        guard value.utf8.count <= Self.maxFieldBytes else { throw .tooLong }
        var value = value
        let result = value.withUTF8 { bytes -> Result<CMCD, Invalid> in
            var cmcd = CMCD()
            do throws(Invalid) {
                try cmcd.read(bytes)
            } catch {
                return .failure(error)
            }
            return .success(cmcd)
        }
        self = try result.get()
    }

    /// The value of `key`, if present.
    package subscript(key: String) -> Value? {
        // By number: a player's every request looks up a dozen keys, and a string comparison of two that differ takes
        // the slow path.
        let code = Self.code(of: key)
        if code != 0 { return member(code: code) }
        return members.first { $0.longKey == key }?.value
    }

    /// The value of `key` (a literal: its number is made from its bytes, with no string), if present.
    package func value(_ key: StaticString) -> Value? {
        let code =
            key.hasPointerRepresentation
            ? Self.code(UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)) : 0
        guard code != 0 else { return self[key.description] }
        return member(code: code)
    }

    /// One of 64 bits for a key number (Fibonacci hashing: keys that share their first letter get different bits).
    private static func bit(_ code: UInt64) -> UInt64 {
        1 << ((code &* 0x9E37_79B9_7F4A_7C15) >> 58)
    }

    /// The value of the member whose key's number is `code` (not 0).
    private func member(code: UInt64) -> Value? {
        guard present & Self.bit(code) != 0 else { return nil }
        for member in members where member.code == code { return member.value }
        return nil
    }

    /// A key of at most 8 bytes as a number (its bytes, first in the low byte); 0 for a longer or empty one.
    static func code(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        guard !bytes.isEmpty, bytes.count <= 8 else { return 0 }
        var code: UInt64 = 0
        var shift: UInt64 = 0
        for byte in bytes {
            code |= UInt64(byte) << shift
            shift += 8
        }
        return code
    }

    /// ``code(_:)`` of a string's bytes (a key, or a token value).
    package static func code(of text: String) -> UInt64 {
        guard text.utf8.count <= 8 else { return 0 }
        var text = text
        return text.withUTF8 { code($0) }
    }

    /// An integer member (`bl`, `br`, `mtp`, `d`, …), if present as one.
    package func integer(_ key: StaticString) -> Int64? {
        if case .integer(let value) = value(key) { return value }
        return nil
    }

    /// A string member (`sid`, `cid`, `nor`, `nrr`, …), if present as one.
    package func string(_ key: StaticString) -> String? {
        if case .string(let value) = value(key) { return value }
        return nil
    }

    /// A token member (`ot`, `sf`, `st`, …), if present as one.
    package func token(_ key: StaticString) -> String? {
        if case .token(let value) = value(key) { return value }
        return nil
    }

    /// Whether a boolean member (`bs`, `su`) is present and true.
    package func flag(_ key: StaticString) -> Bool {
        if case .boolean(true) = value(key) { return true }
        return false
    }

    // MARK: - Parsing (RFC 8941 section 4.2.2, dictionaries)

    private mutating func read(_ bytes: UnsafeBufferPointer<UInt8>) throws(Invalid) {
        var parser = Parser(bytes: bytes)
        parser.skipSpaces()
        if parser.atEnd { return }
        members.reserveCapacity(12)
        while true {
            let (code, longKey) = try parser.key()
            let value: Value
            if parser.peek == UInt8(ascii: "=") {
                parser.index += 1
                value = try parser.itemOrInnerList()
            } else {
                value = .boolean(true)
                try parser.skipParameters()
            }
            let member = Member(value: value, code: code, longKey: longKey)
            guard !members.contains(where: { code != 0 ? $0.code == code : $0.longKey == longKey }) else {
                throw .duplicateKey(member.key)
            }
            guard members.count < Self.maxKeys else { throw .tooManyKeys }
            members.append(member)
            if code != 0 { present |= Self.bit(code) }
            parser.skipOptionalWhitespace()
            if parser.atEnd { return }
            guard parser.peek == UInt8(ascii: ",") else { throw .syntax(at: parser.index) }
            parser.index += 1
            parser.skipOptionalWhitespace()
            // A trailing comma is not a dictionary.
            guard !parser.atEnd else { throw .syntax(at: parser.index) }
        }
    }

    /// Percent-decodes a query value (`%3D` → `=`) into `output`, which holds at least as many bytes.
    /// - Returns: the decoded length; `nil` for a malformed escape.
    private static func percentDecode<Bytes: Collection<UInt8>>(
        _ bytes: Bytes, into output: UnsafeMutableBufferPointer<UInt8>
    ) -> Int? {
        var count = 0
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                output[count] = byte
                count += 1
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            output[count] = high << 4 | low
            count += 1
        }
        return count
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
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        var atEnd: Bool { index >= bytes.count }
        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpaces() {
            while let byte = peek, byte == UInt8(ascii: " ") { index += 1 }
        }

        mutating func skipOptionalWhitespace() {
            while let byte = peek, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { index += 1 }
        }

        /// `( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )`: a key of up to 8 bytes as its number
        /// (no string made), a longer one as a string (and 0).
        mutating func key() throws(Invalid) -> (code: UInt64, long: String?) {
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
            let key = UnsafeBufferPointer(rebasing: bytes[start..<index])
            let code = CMCD.code(key)
            return (code, code == 0 ? String(decoding: key, as: UTF8.self) : nil)
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

        /// A quoted string: printable ASCII, `\"` and `\\` escapes. Made from the field's bytes at once when it has no
        /// escape (every player's `sid` and `nor`): no buffer grown a byte at a time.
        mutating func string() throws(Invalid) -> Value {
            index += 1
            let start = index
            var escapes = 0
            while let byte = peek {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    let body = UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)])
                    guard escapes > 0 else { return .string(String(decoding: body, as: UTF8.self)) }
                    return .string(Self.unescaped(body, count: body.count - escapes))
                case UInt8(ascii: "\\"):
                    guard let escaped = peek, escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") else {
                        throw .syntax(at: index)
                    }
                    escapes += 1
                    index += 1
                case 0x20...0x7E: break
                default: throw .syntax(at: index - 1)
                }
            }
            throw .syntax(at: index)
        }

        /// A checked string body without its escapes' backslashes (`count` bytes).
        private static func unescaped(_ body: UnsafeBufferPointer<UInt8>, count: Int) -> String {
            String(unsafeUninitializedCapacity: count) { output in
                var written = 0
                var escaping = false
                for byte in body {
                    if !escaping, byte == UInt8(ascii: "\\") {
                        escaping = true
                        continue
                    }
                    escaping = false
                    output[written] = byte
                    written += 1
                }
                return written
            }
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
        var target = target
        // Over the bytes, in place, the kept target written straight into its string: a player's every request
        // passes here.
        let found = target.withUTF8 { bytes -> (kept: String, value: Range<Int>)? in
            guard let question = bytes.firstIndex(of: UInt8(ascii: "?")),
                mayContainParameter(UnsafeBufferPointer(rebasing: bytes[question...]))
            else { return nil }
            var value: Range<Int>?
            let kept = String(unsafeUninitializedCapacity: bytes.count) { output in
                var count = 0
                func append(_ range: Range<Int>) {
                    guard !range.isEmpty, let from = bytes.baseAddress, let to = output.baseAddress else { return }
                    (to + count).update(from: from + range.lowerBound, count: range.count)
                    count += range.count
                }
                append(0..<question)
                var keptParameters = 0
                var start = question + 1
                while true {
                    var end = start
                    while end < bytes.count, bytes[end] != UInt8(ascii: "&") { end += 1 }
                    let length = end - start
                    if length >= 4, bytes[start] == UInt8(ascii: "C"), bytes[start + 1] == UInt8(ascii: "M"),
                        bytes[start + 2] == UInt8(ascii: "C"), bytes[start + 3] == UInt8(ascii: "D"),
                        length == 4 || bytes[start + 4] == UInt8(ascii: "=")
                    {
                        value = (length == 4 ? end : start + 5)..<end
                    } else {
                        output[count] = keptParameters == 0 ? UInt8(ascii: "?") : UInt8(ascii: "&")
                        count += 1
                        append(start..<end)
                        keptParameters += 1
                    }
                    guard end < bytes.count else { break }
                    start = end + 1
                }
                // Nothing but empty parameters left (`?CMCD=…&`): no query, as the player's URL without CMCD had
                // none.
                if output[question..<count].allSatisfy({ $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "&") }) {
                    count = question
                }
                return count
            }
            guard let value else { return nil }
            return (kept, value)
        }
        guard let found else { return (target, nil) }
        let utf8 = target.utf8
        let lower = utf8.index(utf8.startIndex, offsetBy: found.value.lowerBound)
        let upper = utf8.index(utf8.startIndex, offsetBy: found.value.upperBound)
        return (found.kept, target[lower..<upper])
    }

    /// Whether `CMCD` occurs in the bytes: without it, nothing to take out.
    private static func mayContainParameter(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
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

    /// What the player sent, as it sent it: what `--cmcd-to-origin` passes on.
    package enum Sent: Sendable, Equatable {
        /// The `CMCD` query parameter's value, percent-encoded as written.
        case query(Substring)
        /// The `CMCD-*` fields, in the order they came.
        case headers([HTTPField])
    }

    /// What the player sent.
    package var sent: Sent
    /// The data, or why it is ignored.
    package var data: Result<CMCD, CMCD.Invalid>

    /// How the player sent it.
    package var mode: Mode {
        switch sent {
        case .query: .query
        case .headers: .headers
        }
    }

    /// The report of a `CMCD` query parameter's value.
    package init(query value: Substring) {
        sent = .query(value)
        data = Result { () throws(CMCD.Invalid) in try CMCD(query: value) }
    }

    /// The report of the `CMCD-*` headers' values, joined with `,`.
    /// - Parameter fields: the fields themselves, when they are to be passed on (the parser reads only `value`).
    package init(headers value: String, fields: [HTTPField] = []) {
        sent = .headers(fields)
        data = Result { () throws(CMCD.Invalid) in try CMCD(headers: value) }
    }
}

extension HTTPField.Name {
    /// `CMCD-Request` (CTA-5004 header mode): keys whose values vary with each request.
    package static let cmcdRequest = HTTPField.Name("CMCD-Request")!
    /// `CMCD-Object`: keys whose values vary with the object requested.
    package static let cmcdObject = HTTPField.Name("CMCD-Object")!
    /// `CMCD-Status`: keys whose values do not vary with every request or object.
    package static let cmcdStatus = HTTPField.Name("CMCD-Status")!
    /// `CMCD-Session`: keys whose values are expected to be invariant over the session.
    package static let cmcdSession = HTTPField.Name("CMCD-Session")!
}
