import HTTPTypes

/// The fields of a request head the hit path reads, gathered as they come: the one list of them, and what each
/// decides, for both readers of a head (``RequestHeadScanner`` from the connection's bytes, ``ExchangeRequest/init(_:)``
/// from the HTTP/1 decoder's head).
package struct ExchangeRequestFields {
    package var hosts = 0
    /// The `Connection` tokens, for ``ClosingRule``.
    package var connection = ClosingRule.Tokens()
    package var origin: String?
    package var range: String?
    package var via: String?
    package var requestHeaders: String?
    package var readAhead: String?
    package var authorization: String?
    /// The `CMCD-Request`, `CMCD-Object`, `CMCD-Status` and `CMCD-Session` values, joined with `,`.
    package var cmcd: String?
    /// The `CMCD-*` fields themselves, as they came (for `--cmcd-to-origin`).
    package var cmcdFields: [HTTPField] = []

    /// Takes one field.
    /// - Parameters:
    ///   - name: the field's name.
    ///   - value: its value.
    ///   - fromBytes: whether the head is read from the connection's bytes, where what only the decoder may read
    ///     (body framing, `Expect`, `Proxy-Connection`, a tab in `Connection`) is refused too.
    /// - Returns: `false` for a field that makes the request another's to read (an upgrade, and those above).
    package mutating func add(
        name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, fromBytes: Bool
    ) -> Bool {
        switch name.count {
        case 4 where Self.equal(name, "host"): hosts += 1
        case 5 where Self.equal(name, "range"): Self.join(&range, value)
        case 3 where Self.equal(name, "via"): Self.join(&via, value)
        case 6 where Self.equal(name, "origin"): Self.join(&origin, value)
        case 7 where Self.equal(name, "upgrade"): return false
        case 10 where Self.equal(name, "connection"):
            // llhttp reads a tab in it its own way: the decoder's to read.
            guard !fromBytes || !value.contains(UInt8(ascii: "\t")) else { return false }
            return takeConnectionTokens(value)
        case 21 where Self.equal(name, "x-hlscache-read-ahead"): Self.join(&readAhead, value)
        case 13 where Self.equal(name, "authorization"): Self.join(&authorization, value)
        case 11 where Self.equal(name, "cmcd-object"): takeCMCD(.cmcdObject, value)
        case 11 where Self.equal(name, "cmcd-status"): takeCMCD(.cmcdStatus, value)
        case 12 where Self.equal(name, "cmcd-request"): takeCMCD(.cmcdRequest, value)
        case 12 where Self.equal(name, "cmcd-session"): takeCMCD(.cmcdSession, value)
        case 30 where Self.equal(name, "access-control-request-headers"): Self.join(&requestHeaders, value)
        case 16 where Self.equal(name, "proxy-connection"):
            // llhttp reads it as `Connection`: from the bytes, the decoder's to read; from its head, its tokens count.
            guard !fromBytes else { return false }
            return takeConnectionTokens(value)
        case 6 where fromBytes && Self.equal(name, "expect"),
            14 where fromBytes && Self.equal(name, "content-length"),
            17 where fromBytes && Self.equal(name, "transfer-encoding"):
            return false
        default: break
        }
        return true
    }

    /// The request read from the connection's bytes (HTTP/1.1, neither CONNECT nor an upgrade: the only ones read
    /// there), unless it came with no `Host` or more than one (the decoder's to read, and refuse: ``DecodedHead``).
    package func request(method: HTTPRequest.Method, target: String) -> ExchangeRequest? {
        guard hosts == 1 else { return nil }
        return requestWithAnyHosts(method: method, target: target)
    }

    /// The request, whatever its `Host` fields (the caller checks them), closing as HTTP/1.1 decides.
    /// The `CMCD` query parameter and the view's `hlscache.*` ones are taken out of the target here, for every
    /// reader of a head: no key, origin request or page sees them.
    package func requestWithAnyHosts(method: HTTPRequest.Method, target: String) -> ExchangeRequest {
        let (withoutCMCD, query) = CMCDQuery.split(target)
        let (target, view) = ViewQuery.split(withoutCMCD)
        var request = ExchangeRequest(
            method: method, target: target, origin: origin, range: range, via: via,
            accessControlRequestHeaders: requestHeaders, readAhead: readAhead, authorization: authorization,
            closes: ClosingRule.closes(major: 1, minor: 1, tokens: connection),
            cmcd: query.map(CMCDReport.init(query:)) ?? cmcd.map { CMCDReport(headers: $0, fields: cmcdFields) })
        request.view = view
        return request
    }

    /// Takes a `CMCD-*` field: its value joined to the others' for the parser, the field kept as it came.
    private mutating func takeCMCD(_ name: HTTPField.Name, _ value: UnsafeBufferPointer<UInt8>) {
        Self.join(&cmcd, value)
        cmcdFields.append(HTTPField(name: name, value: String(decoding: value, as: UTF8.self)))
    }

    /// Takes the tokens of a `Connection` (or `Proxy-Connection`) value for ``ClosingRule``.
    /// - Returns: `false` for an `upgrade` token: the request is the decoder's to read.
    private mutating func takeConnectionTokens(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        for token in Self.tokens(value) {
            if Self.equal(token, "upgrade") { return false }
            connection.add(token)
        }
        return true
    }

    /// A repeated field's values, joined as the decoder's path and HTTP types join them (`, `).
    private static func join(_ field: inout String?, _ value: UnsafeBufferPointer<UInt8>) {
        let text = String(decoding: value, as: UTF8.self)
        field = field.map { $0 + ", " + text } ?? text
    }

    /// The comma-separated tokens of a field value, without their surrounding spaces.
    private static func tokens(_ value: UnsafeBufferPointer<UInt8>) -> [UnsafeBufferPointer<UInt8>] {
        var tokens: [UnsafeBufferPointer<UInt8>] = []
        var start = 0
        for end in 0...value.count where end == value.count || value[end] == UInt8(ascii: ",") {
            var lower = start
            var upper = end
            while lower < upper, isSpace(value[lower]) { lower += 1 }
            while upper > lower, isSpace(value[upper - 1]) { upper -= 1 }
            tokens.append(UnsafeBufferPointer(rebasing: value[lower..<upper]))
            start = end + 1
        }
        return tokens
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// ASCII case-insensitive equality with a lowercase literal.
    private static func equal(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for index in 0..<bytes.count {
            let byte = bytes[index]
            let folded = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            guard folded == expected[index] else { return false }
        }
        return true
    }
}
