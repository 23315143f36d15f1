/// One line of a playlist: its text as written and what it is.
public struct PlaylistLine: Sendable {
    /// What a line is.
    public enum Kind: Sendable, Hashable {
        /// Empty or only blank space.
        case blank
        /// Starts with `#` but not `#EXT`.
        case comment
        /// Starts with `#EXT`; the name says which tag.
        case tag(TagName)
        /// Any other line: a segment or variant stream URI.
        case uri
    }

    private let source: [UInt8]
    private let record: LineRecord
    /// The 1-based line number.
    public let number: Int

    init(source: [UInt8], record: LineRecord, number: Int) {
        self.source = source
        self.record = record
        self.number = number
    }

    /// The line as written, without its line terminator.
    public var text: String { String(decoding: source[record.start..<record.end], as: UTF8.self) }

    /// The line without leading and trailing blanks.
    var trimmedText: Substring {
        Substring(String(decoding: source[record.trimmedStart..<record.trimmedEnd], as: UTF8.self))
    }

    /// What the line is.
    public var kind: Kind {
        switch record.kind {
        case .blank: return .blank
        case .comment: return .comment
        case .uri: return .uri
        case .tag: return .tag(record.tag)
        }
    }

    /// The typed tag, for tag lines; `nil` for other lines.
    public var tag: Tag? {
        guard record.kind == .tag else { return nil }
        return Tag(decoding: trimmedText, name: record.tag)
    }

    /// For a URI line, the URI without surrounding blanks.
    public var uri: String? {
        record.kind == .uri ? String(trimmedText) : nil
    }
}
