import ManifestURLs

extension Playlist {
    /// The playlist's lines joined with LF, ending with a newline: an unmodified parse gives back exactly the
    /// input's lines (a BOM and CR line endings are not written).
    public func serialized() -> [UInt8] {
        var output = ByteWriter(capacity: source.count + 1)
        source.withUnsafeBufferPointer { bytes in
            for record in records {
                output.append(bytes, record.start..<record.end)
                output.append(ASCII.lf)
            }
        }
        return output.array
    }

    /// ``serialized()`` as text.
    public var text: String { String(decoding: serialized(), as: UTF8.self) }
}
