/// The checks RFC 9113 section 8.2 and 8.3 ask of an HTTP/2 request's header block, one field at a time, as
/// ``DecodedHead/init(http2:)`` reads it: names are lowercase tokens; the pseudo-header fields (`:method`, `:scheme`,
/// `:path`, `:authority`) come first, each at most once, `:method`, `:scheme` and `:path` always (a `:path` that
/// does not start with `/` is refused by ``DecodedHead/init(http2:)`` after these checks); no
/// connection-specific field (`connection`, `keep-alive`, `proxy-connection`, `transfer-encoding`, `upgrade`), and
/// `te` only as `trailers`; no value holds NUL, CR or LF, and a pseudo-header's holds no control byte or space.
///
/// These are swift-nio-http2's header block checks, made here instead so that they run once per request and not
/// on every answer's block too (the framing layer checks both ways, or neither): with a thousand LL-HLS answers
/// woken at once, the outbound check was a tenth of the loop's work. A failed check is a malformed request, which
/// RFC 9113 section 8.1.1 lets the server answer before it ends the stream: a 400 with the reason, and the
/// connection's other streams go on (swift-nio-http2 closed the whole connection).
struct HTTP2HeadCheck {
    /// The pseudo-header fields seen so far, by bit.
    private var seen: UInt8 = 0
    /// Whether a regular field was seen: no pseudo-header field may follow.
    private var regularSeen = false

    private static let method: UInt8 = 1
    private static let scheme: UInt8 = 2
    private static let path: UInt8 = 4
    private static let authority: UInt8 = 8

    /// Checks the next field of the block.
    /// - Returns: why the block is malformed, or `nil`.
    mutating func check(name: String, value: String) -> String? {
        var name = name
        var value = value
        return name.withUTF8 { name in value.withUTF8 { check(name: name, value: $0) } }
    }

    private mutating func check(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> String? {
        guard let first = name.first else { return "an empty field name" }
        if first == UInt8(ascii: ":") {
            guard !regularSeen else { return "a pseudo-header field after a regular field" }
            let bit: UInt8
            switch String(decoding: name, as: UTF8.self) {
            case ":method": bit = Self.method
            case ":scheme": bit = Self.scheme
            case ":path": bit = Self.path
            case ":authority": bit = Self.authority
            case ":protocol": return "extended CONNECT (:protocol) is not supported"
            default: return "an unknown pseudo-header field"
            }
            guard seen & bit == 0 else { return "a pseudo-header field given twice" }
            seen |= bit
            guard value.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
                return "a pseudo-header field's value with a control byte or a space"
            }
            return nil
        }
        regularSeen = true
        guard name.allSatisfy({ RequestHeadScanner.isTokenByte($0) && !Self.isUppercase($0) }) else {
            return "a field name that is not a lowercase token"
        }
        guard !value.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) else {
            return "a field value with NUL, CR or LF"
        }
        switch name.count {
        case 2 where name.elementsEqual("te".utf8):
            guard value.elementsEqual("trailers".utf8) else { return "te other than trailers" }
        case 7 where name.elementsEqual("upgrade".utf8), 10 where name.elementsEqual("connection".utf8),
            10 where name.elementsEqual("keep-alive".utf8), 16 where name.elementsEqual("proxy-connection".utf8),
            17 where name.elementsEqual("transfer-encoding".utf8):
            return "a connection-specific field"
        default:
            break
        }
        return nil
    }

    /// Checks what the whole block must have had, once its last field is checked.
    /// - Parameter isConnect: whether `:method` was CONNECT (which needs `:authority`, and no `:scheme` or `:path`).
    /// - Returns: why the block is malformed, or `nil`.
    func end(isConnect: Bool) -> String? {
        if isConnect {
            return seen == Self.method | Self.authority ? nil : "CONNECT needs :authority and no :scheme or :path"
        }
        let required = Self.method | Self.scheme | Self.path
        return seen & required == required ? nil : "a request without :method, :scheme or :path"
    }

    /// An uppercase ASCII letter: a token's byte that an HTTP/2 field name must not have (RFC 9113 section 8.2.1).
    private static func isUppercase(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
    }
}
