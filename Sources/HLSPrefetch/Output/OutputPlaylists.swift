import Foundation
import HLSPlaylist
import ManifestURLs

/// The playlists of an `--output` folder: every URI relative to the folder, every listed file present.
enum OutputPlaylists {
    /// A media playlist listing the recorded segments whose objects are all stored.
    ///
    /// VOD sources are written as VOD. Live sources are written as an EVENT playlist of everything recorded,
    /// with EXT-X-ENDLIST once `final` is set. A segment that could not be fetched is left out and the next one
    /// is marked as a discontinuity. While not final, the list stops at the first segment still being fetched.
    /// - Parameters:
    ///   - recording: the segments and header facts.
    ///   - isStored: whether an object's file is in place.
    ///   - isPending: whether an object is still being fetched.
    ///   - final: whether the recording is over.
    static func media(
        _ recording: MediaRecording, isStored: (PrefetchObject) -> Bool, isPending: (PrefetchObject) -> Bool,
        final: Bool
    ) -> String {
        var written: [RecordedSegment] = []
        var skipped = false
        for segment in recording.segments {
            let objects = [segment.keyObject, segment.mapObject, segment.object].compactMap { $0 }
            if !final && objects.contains(where: isPending) { break }
            guard objects.allSatisfy(isStored) else {
                skipped = true
                continue
            }
            var copy = segment
            if skipped { copy.discontinuity = true }
            skipped = false
            written.append(copy)
        }
        let longest = written.map { Int($0.duration.rounded()) }.max() ?? 0
        var lines = ["#EXTM3U"]
        if let version = recording.version { lines.append("#EXT-X-VERSION:\(max(version, 3))") }
        lines.append("#EXT-X-TARGETDURATION:\(max(recording.targetDuration, longest))")
        lines.append("#EXT-X-PLAYLIST-TYPE:\(recording.isLive ? "EVENT" : "VOD")")
        lines.append("#EXT-X-MEDIA-SEQUENCE:\(written.first?.sequence ?? recording.nextSequence)")
        if recording.discontinuitySequence != 0 {
            lines.append("#EXT-X-DISCONTINUITY-SEQUENCE:\(recording.discontinuitySequence)")
        }
        if recording.independentSegments { lines.append("#EXT-X-INDEPENDENT-SEGMENTS") }
        if recording.iFramesOnly { lines.append("#EXT-X-I-FRAMES-ONLY") }
        var currentKey: String? = nil
        var currentMap: String? = nil
        for (index, segment) in written.enumerated() {
            if segment.discontinuity && index > 0 { lines.append("#EXT-X-DISCONTINUITY") }
            let key = keyLine(segment)
            if key != currentKey, key != nil || currentKey != nil {
                lines.append(key ?? "#EXT-X-KEY:METHOD=NONE")
                currentKey = key
            }
            if let map = segment.mapObject {
                let line = "#EXT-X-MAP:URI=\"\(OutputLayout.path(of: map))\""
                if line != currentMap || segment.discontinuity {
                    lines.append(line)
                    currentMap = line
                }
            }
            lines.append("#EXTINF:\(format(segment.duration)),")
            lines.append(OutputLayout.path(of: segment.object))
        }
        if final || !recording.isLive { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The EXT-X-KEY line for a segment: its attributes with the URI made local and, when the key has no IV,
    /// the IV the sequence number implies made explicit (segments may no longer be numbered consecutively).
    private static func keyLine(_ segment: RecordedSegment) -> String? {
        guard let key = segment.key else { return nil }
        var attributes = key.attributes.attributes
        if let object = segment.keyObject, let uri = attributes.firstIndex(where: { $0.name == "URI" }) {
            attributes[uri] = Attribute(name: "URI", value: OutputLayout.path(of: object), isQuoted: true)
        }
        if !attributes.contains(where: { $0.name == "IV" }) {
            let hex = String(UInt64(truncatingIfNeeded: segment.sequence), radix: 16, uppercase: true)
            attributes.append(
                Attribute(
                    name: "IV", value: "0x" + String(repeating: "0", count: 32 - hex.count) + hex, isQuoted: false))
        }
        return "#EXT-X-KEY:" + AttributeList(attributes).serialized
    }

    /// A duration as EXTINF writes it: up to 6 decimals, no trailing zeros.
    private static func format(_ seconds: Double) -> String {
        var text = String(format: "%.6f", seconds)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// The entry multivariant playlist: the source with chosen media playlists' URIs made local, unchosen
    /// variants and renditions and unfetched tags left out.
    /// - Throws: when the source's URL is not absolute.
    static func multivariant(_ playlist: Playlist, url: String, selection: StreamSelection) throws -> String {
        let chosen = Set(selection.mediaPlaylists)
        let text = try playlist.rewrittenText(
            playlistURL: url,
            mapping: .custom { target in chosen.contains(target) ? OutputLayout.path(ofPlaylist: target) : nil })
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        var kept: [String] = []
        for (index, line) in lines.enumerated() where !selection.droppedLines.contains(index) {
            if selection.dropsSubtitles && line.hasPrefix("#EXT-X-STREAM-INF:") {
                kept.append(removingAttribute("SUBTITLES", from: line))
            } else {
                kept.append(line)
            }
        }
        return kept.joined(separator: "\n") + "\n"
    }

    /// `line` without the attribute `name` (`,NAME="…"` or `,NAME=…`).
    private static func removingAttribute(_ name: String, from line: String) -> String {
        guard let colon = line.firstIndex(of: ":"),
            let attributes = AttributeList(parsing: String(line[line.index(after: colon)...]))
        else { return line }
        let remaining = attributes.attributes.filter { $0.name != name }
        return String(line[...colon]) + AttributeList(remaining).serialized
    }
}
