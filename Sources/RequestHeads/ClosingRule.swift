/// The one rule for whether a connection closes once the answer to a request is written (RFC 9112 section 9.3), as
/// the HTTP/1 parser (llhttp) decides it, since the parser reads nothing more after a request it takes for the last:
/// CONNECT and an upgrade request close; HTTP/1.1 and later keep the connection unless `close` is among its
/// `Connection` (or `Proxy-Connection`, which llhttp reads as `Connection`) tokens; anything else (HTTP/1.0, and
/// the odd versions llhttp accepts, 0.9 and 2.0) closes unless `keep-alive` is among them. ``ExchangeRequestFields`` asks it for every head, read from the
/// connection's bytes or from the decoder's head.
package enum ClosingRule {
    /// The `Connection` tokens the rule reads, gathered token by token.
    package struct Tokens {
        /// `close`.
        package var close = false
        /// `keep-alive`.
        package var keepAlive = false

        /// Takes one token (ASCII, any case, without surrounding spaces).
        package mutating func add(_ token: some Collection<UInt8>) {
            if Self.equal(token, "close") { close = true }
            if Self.equal(token, "keep-alive") { keepAlive = true }
        }

        /// The tokens of `Connection` field values (each a comma-separated list).
        package init(fieldValues: some Sequence<String>) {
            for value in fieldValues {
                for token in value.utf8.split(separator: UInt8(ascii: ",")) {
                    add(token.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed())
                }
            }
        }

        /// No token yet.
        package init() {}

        /// ASCII case-insensitive equality with a lowercase literal.
        package static func equal(_ bytes: some Collection<UInt8>, _ lowercase: StaticString) -> Bool {
            guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
            let expected = lowercase.utf8Start
            for (index, byte) in bytes.enumerated() {
                let folded = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                guard folded == expected[index] else { return false }
            }
            return true
        }
    }

    /// Whether the connection closes after the answer.
    /// - Parameters:
    ///   - major: the request's HTTP major version.
    ///   - minor: its minor version.
    ///   - tokens: its `Connection` and `Proxy-Connection` tokens.
    ///   - isConnect: its method is CONNECT.
    ///   - upgrades: it has an `Upgrade` field.
    package static func closes(
        major: Int, minor: Int, tokens: Tokens, isConnect: Bool = false, upgrades: Bool = false
    ) -> Bool {
        if isConnect || upgrades { return true }
        if major > 0 && minor > 0 { return tokens.close }
        return !tokens.keepAlive
    }
}
