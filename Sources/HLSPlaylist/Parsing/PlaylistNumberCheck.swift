/// Checks the numbers that place segments (target duration, media and discontinuity sequence numbers, byte
/// ranges) once, at parse time, so that every later computation on them (segment sequence numbers, implicit
/// byte-range offsets, expiry times) is known not to overflow.
///
/// A number too large to compute with is an error; any other value that does not decode (a sign, a fraction, no
/// number at all) stays a malformed tag, ignored as players do.
enum PlaylistNumberCheck {
    static func check(_ playlist: Playlist) throws(PlaylistError) {
        var mediaSequence: (value: Int, line: Int)?
        var discontinuitySequence: (value: Int, line: Int)?
        var uriCount = 0
        var hasByteRanges = false
        let lines = playlist.lines
        for index in playlist.records.indices {
            let record = playlist.records[index]
            if record.kind == .uri { uriCount += 1 }
            guard record.kind == .tag else { continue }
            switch record.tag {
            case .targetDuration, .mediaSequence, .discontinuitySequence, .byteRange:
                let line = lines[index]
                guard let tag = line.tag else { continue }
                if case .malformed(let name, let value) = tag, PlaylistNumbers.isTooLarge(value, for: name) {
                    throw .numberOutOfRange(line: index + 1, tag: name.spelling, value: value)
                }
                switch tag {
                case .mediaSequence(let value): mediaSequence = mediaSequence ?? (value, index + 1)
                case .discontinuitySequence(let value):
                    discontinuitySequence = discontinuitySequence ?? (value, index + 1)
                case .byteRange:
                    hasByteRanges = true
                default: break
                }
            default:
                continue
            }
        }
        // Each segment (and each discontinuity, at most one per segment) adds one to its sequence number.
        for (sequence, name) in [
            (mediaSequence, TagName.mediaSequence), (discontinuitySequence, .discontinuitySequence),
        ] {
            if let sequence, sequence.value > Int.max - uriCount {
                throw .numberOutOfRange(
                    line: sequence.line, tag: name.spelling, value: "\(sequence.value) with \(uriCount) segments")
            }
        }
        if hasByteRanges { try checkImplicitOffsets(playlist) }
    }

    /// An EXT-X-BYTERANGE without an offset starts where the previous range of the same resource ended: that end
    /// must fit in `Int` too.
    private static func checkImplicitOffsets(_ playlist: Playlist) throws(PlaylistError) {
        var nextOffset: [String: Int] = [:]
        var pending: (range: PlaylistByteRange, line: Int)?
        let lines = playlist.lines
        for index in playlist.records.indices {
            let record = playlist.records[index]
            if record.kind == .tag, record.tag == .byteRange, case .byteRange(let range)? = lines[index].tag {
                pending = (range, index + 1)
            } else if record.kind == .uri, let (range, line) = pending {
                pending = nil
                guard let uri = lines[index].uri else { continue }
                let offset = range.offset ?? nextOffset[uri] ?? 0
                let (end, overflow) = offset.addingReportingOverflow(range.length)
                if overflow {
                    throw .numberOutOfRange(
                        line: line, tag: TagName.byteRange.spelling, value: "\(range.length) after offset \(offset)")
                }
                nextOffset[uri] = end
            }
        }
    }
}
