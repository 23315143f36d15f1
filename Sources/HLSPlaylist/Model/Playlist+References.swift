import ByteRanges

/// What a URI place of a playlist points at, with the tag that carries it.
public enum ReferenceRole: Sendable, Hashable {
    /// A variant stream's media playlist (EXT-X-STREAM-INF and its URI line).
    case variant(StreamInfTag)
    /// An I-frame media playlist (EXT-X-I-FRAME-STREAM-INF).
    case iFrameVariant(StreamInfTag)
    /// A rendition's media playlist (EXT-X-MEDIA with a URI).
    case rendition(MediaTag)
    /// A media segment (a URI line of a media playlist).
    case segment(Segment)
    /// An initialization section (EXT-X-MAP).
    case map(MapTag)
    /// A decryption key (EXT-X-KEY).
    case key(KeyTag)
    /// A key announced ahead in a multivariant playlist (EXT-X-SESSION-KEY).
    case sessionKey(KeyTag)
    /// A partial segment (EXT-X-PART).
    case part(PartTag)
    /// A resource the server announces ahead (EXT-X-PRELOAD-HINT).
    case preloadHint(PreloadHintTag)
    /// Another rendition's media playlist, for LL-HLS switching (EXT-X-RENDITION-REPORT).
    case renditionReport(RenditionReportTag)
    /// Anything else with a URI: EXT-X-SESSION-DATA, EXT-X-CONTENT-STEERING, EXT-X-DATERANGE assets.
    case other
}

/// One URI place of a playlist, resolved: what it points at, where, and which byte range of it.
public struct PlaylistReference: Sendable, Hashable {
    /// What the place points at.
    public var role: ReferenceRole
    /// The absolute URL after variable substitution and RFC 3986 resolution.
    public var url: String
    /// The bytes of `url` meant (EXT-X-BYTERANGE, or EXT-X-MAP's BYTERANGE), with the offset made explicit.
    public var byteRange: ByteRange?
    /// 0-based index of the line that holds the place.
    public var line: Int

    /// Creates a reference.
    public init(role: ReferenceRole, url: String, byteRange: ByteRange?, line: Int) {
        self.role = role
        self.url = url
        self.byteRange = byteRange
        self.line = line
    }
}

extension Playlist {
    /// Every URI place that resolves to an `http`/`https` URL, in order, with its role: the tree walk shared by
    /// the server (read-ahead) and the prefetch command.
    ///
    /// Places that cannot be resolved (`skd:`, `data:`, unknown variables) and EXT-X-GAP segments are left out.
    /// - Parameters:
    ///   - playlistURL: the absolute URL the playlist was fetched from.
    ///   - imports: the parent multivariant playlist's variables, for EXT-X-DEFINE:IMPORT.
    public func references(playlistURL: String, imports: [String: String] = [:]) -> [PlaylistReference] {
        let resolved = resolvedURIs(playlistURL: playlistURL, imports: imports)
        let placeLines = uriPlaceLines
        var segmentsByLine: [Int: Segment] = [:]
        var variantsByLine: [Int: StreamInfTag] = [:]
        if kind == .media {
            for segment in segments { segmentsByLine[segment.line] = segment }
        } else {
            var pending: StreamInfTag?
            for (index, line) in lines.enumerated() {
                if case .streamInf(let info)? = line.tag { pending = info }
                if line.kind == .uri {
                    if let info = pending { variantsByLine[index] = info }
                    pending = nil
                }
            }
        }
        var result: [PlaylistReference] = []
        result.reserveCapacity(resolved.count)
        let allLines = lines
        for (place, target) in resolved.enumerated() {
            guard let target else { continue }
            let lineIndex = placeLines[place]
            let line = allLines[lineIndex]
            let role: ReferenceRole
            var range: ByteRange?
            switch line.tag {
            case nil where line.kind == .uri:
                if let segment = segmentsByLine[lineIndex] {
                    guard !segment.isGap else { continue }
                    role = .segment(segment)
                    range = segment.byteRange
                } else if let info = variantsByLine[lineIndex] {
                    role = .variant(info)
                } else {
                    continue
                }
            case .iFrameStreamInf(let info)?: role = .iFrameVariant(info)
            case .media(let media)?: role = .rendition(media)
            case .map(let map)?:
                role = .map(map)
                range = map.byteRange?.resolved(offset: 0)
            case .key(let key)?: role = .key(key)
            case .sessionKey(let key)?: role = .sessionKey(key)
            case .part(let part)?:
                role = .part(part)
                range = part.byteRange?.resolved(offset: 0)
            case .preloadHint(let hint)?: role = .preloadHint(hint)
            case .renditionReport(let report)?: role = .renditionReport(report)
            default: role = .other
            }
            result.append(PlaylistReference(role: role, url: target, byteRange: range, line: lineIndex))
        }
        return result
    }
}
