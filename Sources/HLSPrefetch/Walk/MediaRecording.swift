import ByteRanges
import HLSPlaylist

/// A segment of a media playlist as prefetched: its objects and what a written playlist needs to list it.
struct RecordedSegment: Sendable {
    /// The media sequence number.
    var sequence: Int
    /// EXTINF duration, seconds.
    var duration: Double
    /// Whether EXT-X-DISCONTINUITY precedes it (or segments before it were missed).
    var discontinuity: Bool
    /// The segment itself.
    var object: PrefetchObject
    /// The key in force, and its object when it has a fetchable URI.
    var key: KeyTag?
    var keyObject: PrefetchObject?
    /// The initialization section in force.
    var mapObject: PrefetchObject?
}

/// One media playlist being prefetched: its header facts and every segment seen so far, in order.
struct MediaRecording: Sendable {
    /// The URL it is fetched from.
    let url: String
    /// EXT-X-VERSION of the source.
    var version: Int?
    /// EXT-X-TARGETDURATION, seconds.
    var targetDuration: Int
    /// EXT-X-DISCONTINUITY-SEQUENCE when the first segment was recorded.
    var discontinuitySequence: Int
    /// Whether the source has EXT-X-INDEPENDENT-SEGMENTS.
    var independentSegments: Bool
    /// Whether the source is an I-frame playlist (EXT-X-I-FRAMES-ONLY).
    var iFramesOnly: Bool
    /// Whether it was live (no ENDLIST, not VOD) when first fetched.
    let isLive: Bool
    /// Whether the source has ended (ENDLIST seen) or stopped being followed.
    var ended: Bool
    /// The sequence number the next new segment must have.
    var nextSequence: Int
    /// Every segment recorded, in order.
    var segments: [RecordedSegment] = []

    /// Starts a recording from the first fetch of `playlist`.
    init(url: String, playlist: Playlist) {
        self.url = url
        var version: Int?
        var discontinuitySequence = 0
        var independent = false
        var iFramesOnly = false
        for entry in playlist.tags {
            switch entry.tag {
            case .version(let value): version = value
            case .discontinuitySequence(let value): discontinuitySequence = value
            case .independentSegments: independent = true
            case .iFramesOnly: iFramesOnly = true
            default: break
            }
        }
        self.version = version
        self.targetDuration = playlist.targetDuration ?? 10
        self.discontinuitySequence = discontinuitySequence
        self.independentSegments = independent
        self.iFramesOnly = iFramesOnly
        self.isLive = playlist.isLive
        self.ended = !playlist.isLive
        self.nextSequence = playlist.mediaSequence
    }

    /// Records the segments of a fetch of the playlist that are new (sequence ≥ ``nextSequence``).
    /// - Returns: the new segments' objects (segments, keys, initialization sections), in order.
    mutating func record(_ playlist: Playlist, url: String, imports: [String: String] = [:]) -> [PrefetchObject] {
        targetDuration = playlist.targetDuration ?? targetDuration
        var objects: [PrefetchObject] = []
        var missed = false
        var byLine: [Int: PlaylistReference] = [:]
        var keyURLs: [Int: String] = [:]
        var mapURLs: [Int: (String, ByteRange?)] = [:]
        for reference in playlist.references(playlistURL: url, imports: imports) {
            switch reference.role {
            case .segment: byLine[reference.line] = reference
            case .key: keyURLs[reference.line] = reference.url
            case .map: mapURLs[reference.line] = (reference.url, reference.byteRange)
            default: break
            }
        }
        // Which key and map line is in force for each segment line.
        var keyLine: Int?
        var mapLine: Int?
        var inForce: [Int: (key: Int?, map: Int?)] = [:]
        for (index, line) in playlist.lines.enumerated() {
            switch line.tag {
            case .key?: keyLine = index
            case .map?: mapLine = index
            default: if line.kind == .uri { inForce[index] = (keyLine, mapLine) }
            }
        }
        for segment in playlist.segments where segment.sequenceNumber >= nextSequence {
            guard let reference = byLine[segment.line] else {
                missed = true  // a gap or an unresolvable URI: the next recorded segment follows a discontinuity
                continue
            }
            if segment.sequenceNumber > nextSequence, !segments.isEmpty { missed = true }
            let lines = inForce[segment.line] ?? (nil, nil)
            let keyObject = segment.key.flatMap { _ in lines.key.flatMap { keyURLs[$0] } }.map {
                PrefetchObject(url: $0, range: nil, kind: .key)
            }
            let mapObject = lines.map.flatMap { mapURLs[$0] }.map {
                PrefetchObject(url: $0.0, range: $0.1, kind: .initSection)
            }
            let object = PrefetchObject(url: reference.url, range: reference.byteRange, kind: .segment)
            if segments.isEmpty { discontinuitySequence = discontinuityNumber(of: playlist, upTo: segment) }
            segments.append(
                RecordedSegment(
                    sequence: segment.sequenceNumber, duration: segment.duration,
                    discontinuity: segment.discontinuity || missed, object: object, key: segment.key,
                    keyObject: keyObject, mapObject: mapObject))
            missed = false
            objects.append(contentsOf: [keyObject, mapObject, object].compactMap { $0 })
            nextSequence = segment.sequenceNumber + 1
        }
        if playlist.hasEndList || !playlist.isLive { ended = true }
        return objects
    }

    /// The discontinuity sequence number of `segment`: the playlist's, plus the discontinuities between its first
    /// segment and `segment`.
    private func discontinuityNumber(of playlist: Playlist, upTo segment: Segment) -> Int {
        var value = 0
        for entry in playlist.tags {
            if case .discontinuitySequence(let base) = entry.tag { value = base }
        }
        let all = playlist.segments
        for earlier in all.dropFirst() where earlier.line <= segment.line && earlier.discontinuity { value += 1 }
        return value
    }
}
