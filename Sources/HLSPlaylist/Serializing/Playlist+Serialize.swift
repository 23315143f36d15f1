extension Playlist {
    /// The playlist's lines joined with LF, ending with a newline: an unmodified parse gives back exactly the
    /// input's lines (a BOM and CR line endings are not written).
    public func serialized() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(source.count + 1)
        for record in records {
            output.append(contentsOf: source[record.start..<record.end])
            output.append(ASCII.lf)
        }
        return output
    }

    /// ``serialized()`` as text.
    public var text: String { String(decoding: serialized(), as: UTF8.self) }
}
