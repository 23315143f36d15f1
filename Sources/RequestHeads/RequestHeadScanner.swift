import HTTPTypes
import NIOCore

/// Reads one HTTP/1.1 request head straight from a connection's bytes, for ``ConnectionFront``: the few requests the hit
/// path answers (GET, HEAD and OPTIONS with no body) in the strict form every client sends, and nothing else.
///
/// It is stricter than the HTTP/1 decoder behind it, never more lenient: whatever it does not recognise whole
/// (another method or version, a body or its framing headers, `Expect`, an upgrade, `Proxy-Connection`, folded or
/// malformed lines, bare line feeds, control bytes, a head over ``maxHeadLength`` or ``maxFieldCount``) is
/// ``Scan/other``, and from then on the decoder reads
/// the connection. So no request is read one way here and another way there.
package enum RequestHeadScanner {
    /// What the start of a connection's unread bytes holds.
    package enum Scan {
        /// A complete head the hit path may answer, `length` bytes long (no body follows it).
        case request(ExchangeRequest, length: Int)
        /// The start of a head that may still become one: more bytes are needed.
        case incomplete
        /// Anything else: the decoder reads it.
        case other
    }

    /// The longest head read here (the decoder allows more, so nothing it accepts is refused for its length).
    package static let maxHeadLength = 16 << 10
    /// The most fields read here (the decoder allows more; so does a player's request need).
    package static let maxFieldCount = 100

    /// Reads the head at the start of `bytes`.
    package static func scan(_ bytes: ByteBuffer) -> Scan {
        bytes.withUnsafeReadableBytes { scan(head: $0.assumingMemoryBound(to: UInt8.self)) }
    }

    /// Reads the head at the start of `bytes`.
    package static func scan(head bytes: UnsafeBufferPointer<UInt8>) -> Scan {
        var cursor = Cursor(bytes: bytes)
        // The request line: method SP origin-form target SP HTTP/1.1 CRLF.
        let method: HTTPRequest.Method
        switch cursor.token(endingWith: space) {
        case .found("GET"): method = .get
        case .found("HEAD"): method = .head
        case .found("OPTIONS"): method = .options
        case .incomplete: return cursor.incomplete
        default: return .other
        }
        guard let targetBytes = cursor.target() else { return cursor.incomplete }
        guard let targetBytes = targetBytes else { return .other }
        switch cursor.literal("HTTP/1.1\r\n") {
        case .some(true): break
        case .some(false): return .other
        case .none: return cursor.incomplete
        }
        var fields = ExchangeRequestFields()
        var fieldCount = 0
        while true {
            switch cursor.literal("\r\n") {
            case .some(true):
                guard cursor.offset <= maxHeadLength,
                    let request = fields.request(method: method, target: String(decoding: targetBytes, as: UTF8.self))
                else { return .other }
                return .request(request, length: cursor.offset)
            case .none: return cursor.incomplete
            case .some(false): break
            }
            guard let line = cursor.field() else { return cursor.incomplete }
            fieldCount += 1
            guard let (name, value) = line, fieldCount <= maxFieldCount,
                fields.add(name: name, value: value, fromBytes: true)
            else { return .other }
        }
    }

    private static let space = UInt8(ascii: " ")

    private static func isSpace(_ byte: UInt8) -> Bool { byte == space || byte == UInt8(ascii: "\t") }

    /// A `tchar` of RFC 9110 (a field name's and a method's bytes).
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// A field value's byte: visible ASCII, space, tab or obs-text (no control byte, no CR or LF).
    private static func isValueByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\t") || (byte >= 0x20 && byte != 0x7F)
    }

    /// Where the scan is in the head.
    private struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var offset = 0

        /// What a head cut short is: more bytes may complete it, unless it is already longer than a head may be.
        var incomplete: Scan { bytes.count >= RequestHeadScanner.maxHeadLength ? .other : .incomplete }

        enum Token {
            case found(String)
            case incomplete
            case malformed
        }

        /// A method: token bytes up to `end`, which is consumed.
        mutating func token(endingWith end: UInt8) -> Token {
            var index = offset
            while index < bytes.count, bytes[index] != end {
                guard isTokenByte(bytes[index]), index - offset < 16 else { return .malformed }
                index += 1
            }
            guard index < bytes.count else { return .incomplete }
            let token = String(decoding: UnsafeBufferPointer(rebasing: bytes[offset..<index]), as: UTF8.self)
            offset = index + 1
            return .found(token)
        }

        /// An origin-form target (`/` then visible ASCII) and the space after it: `nil` when incomplete, `.some(nil)`
        /// when malformed.
        mutating func target() -> UnsafeBufferPointer<UInt8>?? {
            guard offset < bytes.count else { return nil }
            guard bytes[offset] == UInt8(ascii: "/") else { return .some(nil) }
            var index = offset
            while index < bytes.count, bytes[index] != space {
                guard bytes[index] > 0x20, bytes[index] < 0x7F else { return .some(nil) }
                index += 1
            }
            guard index < bytes.count else { return nil }
            let target = UnsafeBufferPointer(rebasing: bytes[offset..<index])
            offset = index + 1
            return .some(target)
        }

        /// Whether `literal` comes next (consumed if so); `nil` when the bytes end before it can tell.
        mutating func literal(_ literal: StaticString) -> Bool? {
            let count = literal.utf8CodeUnitCount
            let available = min(count, bytes.count - offset)
            for index in 0..<available where bytes[offset + index] != literal.utf8Start[index] { return false }
            guard available == count else { return nil }
            offset += count
            return true
        }

        /// One field line, `name: value CRLF`, with the spaces before the value cut and those after it kept, as the
        /// decoder keeps them: `nil` when incomplete,
        /// `.some(nil)` when malformed (no name, a space before the colon, a folded line, a control byte, a bare CR
        /// or LF).
        mutating func field() -> (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>)?? {
            var index = offset
            while index < bytes.count, bytes[index] != UInt8(ascii: ":") {
                guard isTokenByte(bytes[index]) else { return .some(nil) }
                index += 1
            }
            guard index < bytes.count else { return nil }
            guard index > offset else { return .some(nil) }
            let name = UnsafeBufferPointer(rebasing: bytes[offset..<index])
            index += 1
            while index < bytes.count, isSpace(bytes[index]) { index += 1 }
            let valueStart = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "\r") {
                guard isValueByte(bytes[index]) else { return .some(nil) }
                index += 1
            }
            guard index + 1 < bytes.count else { return nil }
            guard bytes[index + 1] == UInt8(ascii: "\n") else { return .some(nil) }
            offset = index + 2
            return .some((name, UnsafeBufferPointer(rebasing: bytes[valueStart..<index])))
        }
    }
}
