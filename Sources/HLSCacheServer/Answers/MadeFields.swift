import HTTPTypes
import NIOCore

/// An answer's own fields made once, with the bytes of their lines (`name: value CRLF`), for answers that many
/// requests share: every hit on a live playlist's rendering has the same ones (``RenderedPlaylist/hitFields(lastModified:)``).
final class MadeFields: Sendable {
    /// The fields.
    let fields: HTTPFields
    /// Their lines, as ``Answer/writeHead(closing:chunked:into:)`` writes them.
    let bytes: ByteBuffer

    /// Makes the lines of `fields`.
    init(_ fields: HTTPFields) {
        self.fields = fields
        var bytes = ByteBuffer()
        for field in fields { bytes.writeFieldLine(field.name.rawName, field.value) }
        self.bytes = bytes
    }
}

extension ByteBuffer {
    /// Writes `name: value CRLF`.
    mutating func writeFieldLine(_ name: String, _ value: String) {
        writeString(name)
        writeStaticString(": ")
        writeString(value)
        writeStaticString("\r\n")
    }
}
