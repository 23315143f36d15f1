import ByteRanges
import Foundation
import ManifestURLs

extension Playlist {
    /// The tags that describe the whole media playlist, kept from the lines a window cuts.
    private static let playlistTags: Set<TagName> = [
        .extm3u, .version, .targetDuration, .playlistType, .independentSegments, .start, .serverControl, .partInf,
        .define, .iFramesOnly,
    ]

    /// A live media playlist cut to its newest segments covering `seconds` (at least three target durations);
    /// `nil` when it is that short already. See ``viewed(by:)``.
    ///
    /// Only what the cut needs is decoded: the durations of the newest segments, walked back from the end, and the
    /// tags before the cut that carry over (a window of a long playlist costs about a parse, not a decode of every
    /// line).
    func windowed(seconds: Double) -> [UInt8]? {
        let uriLines = records.indices.filter { records[$0].kind == .uri }
        guard uriLines.count > 1 else { return nil }
        let window = max(seconds, 3 * Double(targetDuration ?? 0))
        // A segment's lines run from after the previous segment's URI line to its own.
        func start(of segment: Int) -> Int { segment == 0 ? 0 : uriLines[segment - 1] + 1 }
        func duration(of segment: Int) -> Double {
            for index in (start(of: segment)..<uriLines[segment]).reversed()
            where records[index].kind == .tag && records[index].tag == .extinf {
                if case .segmentInfo(let info)? = lines[index].tag { return info.duration }
            }
            return 0
        }
        var first = uriLines.count - 1
        var covered = duration(of: first)
        while first > 0, covered < window {
            first -= 1
            covered += duration(of: first)
        }
        guard first > 0 else { return nil }
        // The kept segment's sequence number, and its byte range when its lines leave the offset implicit (the
        // segments before it decoded then only).
        let keptSequence = mediaSequence + first
        var keptByteRange: ByteRange?
        for index in start(of: first)..<uriLines[first]
        where records[index].kind == .tag && records[index].tag == .byteRange {
            if case .byteRange(let range)? = lines[index].tag, range.offset == nil {
                keptByteRange = segments[first].byteRange
            }
        }
        let kept = (sequenceNumber: keptSequence, byteRange: keptByteRange, line: uriLines[first])
        let cut = start(of: first)
        var discontinuities = 0
        var lastDate: (date: Date, segment: Int)?
        var lastDateLine: (index: Int, segment: Int)?
        var keys: [String: Int] = [:]
        var map: Int?
        var segment = 0
        var mediaSequenceLine: Int?
        var discontinuitySequence: (line: Int, value: Int)?
        for index in 0..<cut {
            let record = records[index]
            if record.kind == .uri {
                segment += 1
                continue
            }
            guard record.kind == .tag else { continue }
            switch record.tag {
            case .discontinuity: discontinuities += 1
            case .mediaSequence: mediaSequenceLine = index
            case .discontinuitySequence:
                if case .discontinuitySequence(let value)? = lines[index].tag { discontinuitySequence = (index, value) }
            case .key:
                if case .key(let key)? = lines[index].tag { keys[key.keyFormat ?? "identity"] = index }
            case .map: map = index
            case .programDateTime: lastDateLine = (index, segment)
            default: break
            }
        }
        // Only the last date before the cut is read (a date per segment is common).
        if let (index, segment) = lastDateLine, case .programDateTime(let text)? = lines[index].tag,
            let date = Self.date(text)
        {
            lastDate = (date, segment)
        }
        var output: [UInt8] = []
        output.reserveCapacity(source.count - records[cut].start + 512)
        func line(_ text: String) {
            output.append(contentsOf: text.utf8)
            output.append(UInt8(ascii: "\n"))
        }
        func copy(_ index: Int) {
            output.append(contentsOf: lineBytes(index))
            output.append(UInt8(ascii: "\n"))
        }
        let sequenceText = "#EXT-X-MEDIA-SEQUENCE:\(kept.sequenceNumber)"
        let baseDiscontinuity = discontinuitySequence?.value ?? 0
        let discontinuityText = "#EXT-X-DISCONTINUITY-SEQUENCE:\(baseDiscontinuity + discontinuities)"
        var wroteSequence = false
        for index in 0..<cut where records[index].kind == .tag {
            if index == mediaSequenceLine {
                line(sequenceText)
                wroteSequence = true
                if discontinuitySequence == nil, discontinuities > 0 { line(discontinuityText) }
            } else if index == discontinuitySequence?.line {
                line(discontinuityText)
            } else if Self.playlistTags.contains(records[index].tag) {
                copy(index)
            }
        }
        if !wroteSequence {
            line(sequenceText)
            if discontinuitySequence == nil, discontinuities > 0 { line(discontinuityText) }
        }
        // What was in force when the kept segment's lines begin: written again unless its own lines say it anew.
        var ownTags = Set<TagName>()
        for index in cut..<kept.line where records[index].kind == .tag { ownTags.insert(records[index].tag) }
        if !ownTags.contains(.key) { for index in keys.values.sorted() { copy(index) } }
        if !ownTags.contains(.map), let map { copy(map) }
        if !ownTags.contains(.programDateTime), let lastDate {
            let elapsed = (lastDate.segment..<first).reduce(0) { $0 + duration(of: $1) }
            line("#EXT-X-PROGRAM-DATE-TIME:" + Self.dateText(lastDate.date.addingTimeInterval(elapsed)))
        }
        for index in cut..<records.count {
            // An implicit byte range of the first kept segment follows one that is cut: its offset is written.
            if index < kept.line, records[index].kind == .tag, records[index].tag == .byteRange,
                case .byteRange(let range)? = lines[index].tag, range.offset == nil, let bytes = kept.byteRange
            {
                line("#EXT-X-BYTERANGE:\(bytes.length)@\(bytes.offset)")
                continue
            }
            copy(index)
        }
        return output
    }

    /// An `EXT-X-PROGRAM-DATE-TIME` value read (ISO 8601 with a time zone, fractions of a second allowed).
    static func date(_ text: String) -> Date? { RFC3339.date(text) }

    /// A date as `EXT-X-PROGRAM-DATE-TIME` writes it, in UTC with milliseconds.
    static func dateText(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
