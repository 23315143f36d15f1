import Foundation
import ManifestURLs

extension Playlist {
    /// The playlist as `view` shows it: a multivariant playlist's variants, renditions and I-frame playlists
    /// filtered; a live media playlist's segments cut to the view's window. The lines kept are kept as written.
    ///
    /// - A variant goes when its `BANDWIDTH`, the height of its `RESOLUTION` or one of its `CODECS` is outside the
    ///   view, or when its `AUDIO` group lost every rendition; a `SUBTITLES` group that lost every rendition is
    ///   taken off the variants that name it. I-frame playlists are filtered as variants (or all removed).
    /// - A window keeps the newest segments that cover it, never less than three target durations (RFC 8216: no
    ///   live playlist shorter); the media and discontinuity sequence numbers, the key and map in force, the date of
    ///   the first segment and an implicit byte range's offset are carried over.
    /// - Throws: ``ManifestViewError`` when the view leaves no variant.
    /// - Returns: `self` when the view changes nothing here.
    public func viewed(by view: ManifestView) throws(ManifestViewError) -> Playlist {
        var output: [UInt8]?
        switch kind {
        case .multivariant where view.filtersStreams: output = try filteredVariants(view)
        // Not an EVENT playlist (start-over's): its segments are never removed.
        case .media where view.windowSeconds != nil && !hasEndList && playlistType == nil:
            output = windowed(seconds: view.windowSeconds!)
        default: break
        }
        guard let output else { return self }
        do {
            return try Playlist(parsing: output)
        } catch {
            throw .unrenderable("the view's playlist does not parse: \(error)")
        }
    }

    /// A line's bytes, as written.
    func lineBytes(_ index: Int) -> ArraySlice<UInt8> { source[records[index].start..<records[index].end] }

    /// The multivariant playlist without what `view` filters out; `nil` when nothing is.
    private func filteredVariants(_ view: ManifestView) throws(ManifestViewError) -> [UInt8]? {
        // The renditions first: which go, and which groups are left with none.
        var dropped = Set<Int>()
        var groups: [String: (all: Int, kept: Int)] = [:]
        for index in records.indices where records[index].kind == .tag && records[index].tag == .media {
            guard case .media(let media)? = lines[index].tag else { continue }
            let type = media.type.uppercased()
            let kept: Bool
            switch type {
            case "AUDIO": kept = view.keepsAudio(language: media.language)
            case "SUBTITLES": kept = view.keepsSubtitles(language: media.language)
            default: kept = true
            }
            let group = type + "\u{0}" + media.groupID
            groups[group, default: (0, 0)].all += 1
            if kept { groups[group, default: (0, 0)].kept += 1 } else { dropped.insert(index) }
        }
        func emptied(_ type: String, _ id: String?) -> Bool {
            guard let id, let counts = groups[type + "\u{0}" + id] else { return false }
            return counts.kept == 0
        }
        func keeps(_ info: StreamInfTag) -> Bool {
            if let bounds = view.bandwidth, !bounds.contains(info.bandwidth) { return false }
            if let bounds = view.height, let resolution = info.resolution, !bounds.contains(resolution.height) {
                return false
            }
            return view.keepsCodecs(info.codecs)
        }
        var variants = 0
        var keptVariants = 0
        var replaced: [Int: [UInt8]] = [:]
        var dropsNextURI = false
        for index in records.indices {
            let record = records[index]
            if record.kind == .uri {
                if dropsNextURI { dropped.insert(index) }
                dropsNextURI = false
                continue
            }
            guard record.kind == .tag else { continue }
            switch lines[index].tag {
            case .streamInf(let info)?:
                variants += 1
                guard keeps(info), !emptied("AUDIO", info.audio) else {
                    dropped.insert(index)
                    dropsNextURI = true
                    continue
                }
                keptVariants += 1
                if emptied("SUBTITLES", info.subtitles) {
                    replaced[index] = Self.removingAttribute("SUBTITLES", from: Array(lineBytes(index)))
                }
            case .iFrameStreamInf(let info)?:
                if view.removesIFrames || !keeps(info) { dropped.insert(index) }
            default: break
            }
        }
        if variants > 0, keptVariants == 0 { throw .leavesNothing("no variant of the playlist is left") }
        if dropped.isEmpty, replaced.isEmpty { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(source.count)
        for index in records.indices where !dropped.contains(index) {
            output.append(contentsOf: replaced[index] ?? Array(lineBytes(index)))
            output.append(UInt8(ascii: "\n"))
        }
        return output
    }

    /// A tag line without one of its attributes (`NAME=value` or `NAME="value"`), and the comma before it.
    static func removingAttribute(_ name: String, from line: [UInt8]) -> [UInt8] {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return line }
        var attributes: [ArraySlice<UInt8>] = []
        var start = colon + 1
        var quoted = false
        for index in start...line.count {
            if index < line.count, line[index] == UInt8(ascii: "\"") { quoted.toggle() }
            if index == line.count || (!quoted && line[index] == UInt8(ascii: ",")) {
                attributes.append(line[start..<index])
                start = index + 1
            }
        }
        let prefix = Array((name + "=").utf8)
        let kept = attributes.filter { !$0.starts(with: prefix) }
        var output = Array(line[...colon])
        for (number, attribute) in kept.enumerated() {
            if number > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: attribute)
        }
        return output
    }
}
