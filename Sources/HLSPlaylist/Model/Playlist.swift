/// A parsed HLS playlist: every line of the input, classified, with typed tags and the places of its URIs.
///
/// The playlist keeps its source bytes and an index of its lines; tags are decoded into ``Tag``
/// values when asked for, so parsing and rewriting a large playlist does no per-line allocation.
/// An unmodified playlist serializes to exactly its input's lines (see ``serialized()``).
///
/// ```swift
/// let playlist = try Playlist(parsing: bytes)
/// let output = try playlist.rewritten(playlistURL: url, mapping: .proxy(base: ""))
/// ```
public struct Playlist: Sendable {
    /// Whether a playlist lists variant streams or segments.
    public enum Kind: Sendable, Hashable {
        /// A multivariant (master) playlist: EXT-X-STREAM-INF, EXT-X-MEDIA, …
        case multivariant
        /// A media playlist: segments.
        case media
    }

    /// The input bytes, without a leading BOM.
    let source: [UInt8]
    /// One record per line, in order.
    let records: [LineRecord]
    /// The URI places, in order of their position in `source`.
    let places: [URIPlace]

    /// Whether this is a multivariant or a media playlist.
    public let kind: Kind
    /// The EXT-X-DEFINE declarations, in order.
    public let definitions: [VariableDefinition]
    /// Whether `{$` occurs anywhere in `source`: without it, no variable work is needed. Scanned once, here, for the
    /// parser's declaration check and every rewrite after it.
    let hasVariableReference: Bool

    /// A parsed playlist; `mayHaveVariableReference` is false when no `{` occurs in `source` (the parser's survey
    /// knows), to spare the scan for `{$`.
    init(
        source: [UInt8], records: [LineRecord], places: [URIPlace], definitions: [VariableDefinition],
        mayHaveVariableReference: Bool
    ) {
        self.source = source
        self.records = records
        self.places = places
        self.definitions = definitions
        self.hasVariableReference =
            mayHaveVariableReference && source.withUnsafeBufferPointer { $0.containsVariableReference() }
        var hasSegments = false
        var hasVariants = false
        for record in records where record.kind == .tag {
            switch record.tag {
            case .extinf, .targetDuration: hasSegments = true
            case .streamInf, .iFrameStreamInf, .media: hasVariants = true
            default: break
            }
        }
        self.kind = hasVariants && !hasSegments ? .multivariant : .media
    }

    /// The lines of the playlist, in order.
    public var lines: Lines { Lines(playlist: self) }

    /// The number of URI places the playlist has (URI lines and URI attributes of the tags that carry one).
    public var uriPlaceCount: Int { places.count }

    /// The text of every URI place, as written, in order.
    public var uriPlaceTexts: [String] {
        places.map { String(decoding: source[$0.start..<$0.end], as: UTF8.self) }
    }

    /// The 0-based line index of every URI place, in the order of ``uriPlaceTexts`` and
    /// ``resolvedURIs(playlistURL:imports:)``: pair them with ``Segment/line`` to find a segment's URL.
    public var uriPlaceLines: [Int] { places.map { Int($0.line) } }

    /// The lines of a playlist as a random-access collection.
    public struct Lines: RandomAccessCollection, Sendable {
        let playlist: Playlist

        /// The first index, 0.
        public var startIndex: Int { 0 }
        /// The number of lines.
        public var endIndex: Int { playlist.records.count }

        /// The line at `index` (0-based; its ``PlaylistLine/number`` is `index + 1`).
        public subscript(index: Int) -> PlaylistLine {
            PlaylistLine(source: playlist.source, record: playlist.records[index], number: index + 1)
        }
    }
}

/// The class of a line.
enum LineClass: UInt8, Sendable {
    case blank, comment, tag, uri
}

/// Where a line lies in the source and what it is.
///
/// Offsets are stored as `Int32` (a playlist is at most ``ParseLimits/maxBodyBytes``, far below 2 GiB), so a record
/// takes 28 bytes: a million-line playlist costs 28 MB of records, not 48.
struct LineRecord: Sendable {
    private var storedStart: Int32
    private var storedEnd: Int32
    private var storedTrimmedStart: Int32
    private var storedTrimmedEnd: Int32
    var kind: LineClass
    var tag: TagName
    /// Index of the line's first URI place in `Playlist.places`, and how many it has.
    var firstPlace: Int32
    var placeCount: Int32

    init(
        start: Int, end: Int, trimmedStart: Int, trimmedEnd: Int, kind: LineClass, tag: TagName, firstPlace: Int32,
        placeCount: Int32
    ) {
        storedStart = Int32(truncatingIfNeeded: start)
        storedEnd = Int32(truncatingIfNeeded: end)
        storedTrimmedStart = Int32(truncatingIfNeeded: trimmedStart)
        storedTrimmedEnd = Int32(truncatingIfNeeded: trimmedEnd)
        self.kind = kind
        self.tag = tag
        self.firstPlace = firstPlace
        self.placeCount = placeCount
    }

    /// The line's bytes, without its terminator.
    var start: Int { Int(storedStart) }
    var end: Int { Int(storedEnd) }
    /// The line without leading and trailing blanks.
    var trimmedStart: Int { Int(storedTrimmedStart) }
    var trimmedEnd: Int { Int(storedTrimmedEnd) }
}

/// The bytes of a URI (an attribute value between its quotes, or a URI line without blanks).
struct URIPlace: Sendable {
    var start: Int
    var end: Int
    /// 0-based line index.
    var line: Int32
}

/// One EXT-X-DEFINE declaration.
public struct VariableDefinition: Sendable, Hashable {
    /// Where the variable's value comes from.
    public enum Source: Sendable, Hashable {
        /// `NAME="…",VALUE="…"`.
        case value(String)
        /// `IMPORT="…"`: the parent multivariant playlist's variable of the same name.
        case `import`
        /// `QUERYPARAM="…"`: the query parameter of that name in the playlist's URL.
        case queryParameter
    }

    /// The variable's name.
    public var name: String
    /// Where the value comes from.
    public var source: Source

    /// Creates a definition.
    /// - Parameters:
    ///   - name: the variable's name.
    ///   - source: where its value comes from.
    public init(name: String, source: Source) {
        self.name = name
        self.source = source
    }
}
