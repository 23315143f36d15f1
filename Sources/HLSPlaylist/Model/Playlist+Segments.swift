import ByteRanges

/// A media segment with the tags that apply to it.
public struct Segment: Sendable, Hashable {
    /// The URI as written.
    public var uri: String
    /// The media sequence number.
    public var sequenceNumber: Int
    /// EXTINF duration, seconds.
    public var duration: Double
    /// EXT-X-BYTERANGE with its offset made explicit.
    public var byteRange: ByteRange?
    /// The EXT-X-KEY in force, if its method is not NONE.
    public var key: KeyTag?
    /// The EXT-X-MAP in force.
    public var map: MapTag?
    /// Whether EXT-X-DISCONTINUITY precedes it.
    public var discontinuity: Bool
    /// Whether EXT-X-GAP marks it.
    public var isGap: Bool
    /// 0-based index of its URI line.
    public var line: Int
}

/// A variant stream of a multivariant playlist.
public struct VariantStream: Sendable, Hashable {
    /// The URI line as written.
    public var uri: String
    /// The EXT-X-STREAM-INF attributes.
    public var streamInf: StreamInfTag
}

extension Playlist {
    /// The segments of a media playlist, in order, with byte-range offsets, keys and maps applied.
    public var segments: [Segment] {
        var result: [Segment] = []
        var sequence = mediaSequence
        var duration = 0.0
        var range: PlaylistByteRange?
        var key: KeyTag?
        var map: MapTag?
        var discontinuity = false
        var gap = false
        var nextOffset: [String: Int] = [:]
        for (index, line) in lines.enumerated() {
            switch line.kind {
            case .uri:
                let uri = line.uri!
                let bytes = range?.resolved(offset: nextOffset[uri] ?? 0)
                if let bytes { nextOffset[uri] = Int(bytes.upperBound) }
                result.append(
                    Segment(
                        uri: uri, sequenceNumber: sequence, duration: duration, byteRange: bytes, key: key, map: map,
                        discontinuity: discontinuity, isGap: gap, line: index))
                sequence += 1
                duration = 0
                range = nil
                discontinuity = false
                gap = false
            case .tag(.extinf), .tag(.byteRange), .tag(.key), .tag(.map), .tag(.discontinuity), .tag(.gap):
                switch line.tag {
                case .segmentInfo(let info)?: duration = info.duration
                case .byteRange(let byteRange)?: range = byteRange
                case .key(let tag)?: key = tag.method.uppercased() == "NONE" ? nil : tag
                case .map(let tag)?: map = tag
                case .discontinuity?: discontinuity = true
                case .gap?: gap = true
                default: break
                }
            default: break
            }
        }
        return result
    }

    /// The variant streams of a multivariant playlist: each EXT-X-STREAM-INF with the URI line after it.
    public var variantStreams: [VariantStream] {
        var result: [VariantStream] = []
        var pending: StreamInfTag?
        for line in lines {
            switch line.kind {
            case .tag(.streamInf):
                if case .streamInf(let info)? = line.tag { pending = info }
            case .uri:
                if let info = pending { result.append(VariantStream(uri: line.uri!, streamInf: info)) }
                pending = nil
            default: break
            }
        }
        return result
    }

    /// The EXT-X-MEDIA renditions of a multivariant playlist.
    public var renditions: [MediaTag] {
        tags.compactMap { if case .media(let media) = $0.tag { return media } else { return nil } }
    }
}
