import ByteRanges

/// A typed playlist tag.
///
/// Tags with attribute lists carry a struct with typed fields and the whole ``AttributeList`` (so unknown
/// attributes are not lost). A known tag whose value cannot be read is ``malformed(_:value:)``; a tag the model
/// does not know is ``unknown(name:value:)``. Either is kept verbatim in the playlist.
public enum Tag: Sendable, Hashable {
    /// `#EXTM3U`.
    case header
    /// `#EXT-X-VERSION:n`.
    case version(Int)
    /// `#EXT-X-INDEPENDENT-SEGMENTS`.
    case independentSegments
    /// `#EXT-X-START`.
    case start(StartTag)
    /// `#EXT-X-DEFINE`.
    case define(VariableDefinition)
    /// `#EXT-X-TARGETDURATION:s`.
    case targetDuration(Int)
    /// `#EXT-X-MEDIA-SEQUENCE:n`.
    case mediaSequence(Int)
    /// `#EXT-X-DISCONTINUITY-SEQUENCE:n`.
    case discontinuitySequence(Int)
    /// `#EXT-X-PLAYLIST-TYPE:EVENT|VOD`.
    case playlistType(PlaylistType)
    /// `#EXT-X-ENDLIST`.
    case endList
    /// `#EXT-X-I-FRAMES-ONLY`.
    case iFramesOnly
    /// `#EXT-X-PART-INF`.
    case partInf(PartInfTag)
    /// `#EXT-X-SERVER-CONTROL`.
    case serverControl(ServerControlTag)
    /// `#EXTINF:duration,[title]`.
    case segmentInfo(SegmentInfo)
    /// `#EXT-X-BYTERANGE:n[@o]`.
    case byteRange(PlaylistByteRange)
    /// `#EXT-X-DISCONTINUITY`.
    case discontinuity
    /// `#EXT-X-KEY`.
    case key(KeyTag)
    /// `#EXT-X-MAP`.
    case map(MapTag)
    /// `#EXT-X-PROGRAM-DATE-TIME:<ISO 8601 date-time>`, as written.
    case programDateTime(String)
    /// `#EXT-X-DATERANGE`.
    case dateRange(DateRangeTag)
    /// `#EXT-X-GAP`.
    case gap
    /// `#EXT-X-BITRATE:kbps`.
    case bitrate(Int)
    /// `#EXT-X-PART`.
    case part(PartTag)
    /// `#EXT-X-PRELOAD-HINT`.
    case preloadHint(PreloadHintTag)
    /// `#EXT-X-RENDITION-REPORT`.
    case renditionReport(RenditionReportTag)
    /// `#EXT-X-SKIP`.
    case skip(SkipTag)
    /// `#EXT-X-MEDIA`.
    case media(MediaTag)
    /// `#EXT-X-STREAM-INF` (its URI is the next URI line).
    case streamInf(StreamInfTag)
    /// `#EXT-X-I-FRAME-STREAM-INF`.
    case iFrameStreamInf(StreamInfTag)
    /// `#EXT-X-SESSION-DATA`.
    case sessionData(SessionDataTag)
    /// `#EXT-X-SESSION-KEY`.
    case sessionKey(KeyTag)
    /// `#EXT-X-CONTENT-STEERING`.
    case contentSteering(ContentSteeringTag)
    /// A tag the model does not know: its name (without `#`) and the text after the colon.
    case unknown(name: String, value: String?)
    /// A known tag whose value cannot be read, with the text after the colon.
    case malformed(TagName, value: String)
}

/// `#EXT-X-PLAYLIST-TYPE` values.
public enum PlaylistType: Sendable, Hashable {
    /// `EVENT`: segments are only appended.
    case event
    /// `VOD`: the playlist never changes.
    case vod
    /// Anything else, as written.
    case other(String)
}

/// A byte range as a playlist writes it, `length[@offset]` (EXT-X-BYTERANGE, BYTERANGE attributes): the offset may
/// be left out. Once the offset is known, the bytes are a ``ByteRanges/ByteRange`` (``resolved(offset:)``), the one
/// type the cache, the origin client and the server use.
public struct PlaylistByteRange: Sendable, Hashable {
    /// The number of bytes.
    public var length: Int
    /// The offset of the first byte; `nil` means right after the previous range of the same resource.
    public var offset: Int?

    /// Creates a byte range.
    /// - Parameters:
    ///   - length: the number of bytes.
    ///   - offset: the offset of the first byte, if given.
    public init(length: Int, offset: Int?) {
        self.length = length
        self.offset = offset
    }

    /// Parses `n[@o]` (`n@` is read as `n`); `nil` when either number is not a decimal-integer or the range's end does not fit in `Int`.
    /// - Parameter text: the value.
    public init?(parsing text: some StringProtocol) {
        let parts = text.trimmingBlanks().split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let length = PlaylistNumbers.decimalInteger(parts[0]) else { return nil }
        if parts.count == 2, !parts[1].isEmpty {
            guard let offset = PlaylistNumbers.decimalInteger(parts[1]), offset <= Int.max - length else {
                return nil
            }
            self.init(length: length, offset: offset)
        } else {
            self.init(length: length, offset: nil)
        }
    }

    /// The bytes meant, with `implicitOffset` where the playlist left the offset out.
    /// - Parameter implicitOffset: where the previous range of the same resource ended (0 for the first).
    /// - Returns: the bytes; `nil` only when the end would not fit (checked at parse time: never for a parsed
    ///   playlist).
    public func resolved(offset implicitOffset: Int) -> ByteRange? {
        ByteRange(offset: Int64(offset ?? implicitOffset), length: Int64(length))
    }
}

/// `#EXTINF`: a segment's duration and optional title.
public struct SegmentInfo: Sendable, Hashable {
    /// Duration in seconds.
    public var duration: Double
    /// The title after the comma, possibly empty.
    public var title: String

    /// Creates segment information.
    /// - Parameters:
    ///   - duration: seconds.
    ///   - title: the title.
    public init(duration: Double, title: String) {
        self.duration = duration
        self.title = title
    }
}
