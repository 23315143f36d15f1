import NIOCore

/// The client connection preface of HTTP/2 (RFC 9113 section 3.4): how a client that knows the server speaks HTTP/2
/// in cleartext (`h2c` by prior knowledge, as a load balancer speaking HTTP/2 to its backends does) opens a
/// connection. No HTTP/1 request starts with it (`PRI` is no method a player sends).
enum HTTP2Preface {
    /// `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`.
    static let bytes: [UInt8] = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// What a connection's first bytes are.
    enum Match: Equatable {
        /// The preface, whole (what follows it is HTTP/2's frames).
        case whole
        /// The start of the preface: more bytes are needed to tell.
        case partial
        /// Not the preface: an HTTP/1 connection.
        case none
    }

    /// Whether `buffer`'s readable bytes, the first of a connection, start with the preface.
    static func match(_ buffer: ByteBuffer) -> Match {
        let count = min(buffer.readableBytes, bytes.count)
        guard count > 0 else { return .partial }
        let matches = buffer.withUnsafeReadableBytes { readable in
            readable.prefix(count).elementsEqual(bytes.prefix(count))
        }
        guard matches else { return .none }
        return count == bytes.count ? .whole : .partial
    }
}
