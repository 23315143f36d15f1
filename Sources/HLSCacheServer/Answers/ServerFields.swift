import NIOCore
import OriginCache

/// The fields every answer of the server carries, whichever writer writes it (the event loop's bytes, the HTTP/1
/// encoder's head, Hummingbird's response): `Date` (now, formatted at most once a second per thread) and `Server`.
/// The one list of them.
enum ServerFields {
    /// Calls `body` with each field's name and value, in order; with `lowercased`, the names as HTTP/2 writes them
    /// (spelled here, not lowercased on every answer).
    static func forEach(lowercased: Bool = false, _ body: (String, String) -> Void) {
        body(lowercased ? "date" : "Date", HTTPDate.now)
        body(lowercased ? "server" : "Server", Answer.serverName)
    }

    /// The fields as lines (`Name: value` CRLF each), made at most once a second per thread.
    static var lines: ByteBuffer { HTTPDate.dateAndServerLines }

    /// The lines of ``forEach(_:)`` for the date `text`: what ``lines`` caches.
    static func lines(date text: String) -> ByteBuffer {
        var lines = ByteBuffer()
        lines.writeFieldLine("Date", text)
        lines.writeFieldLine("Server", Answer.serverName)
        return lines
    }
}
