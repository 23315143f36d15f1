import ByteRanges
import ManifestURLs

/// Where a media segment is fetched from: its resolved URL and, for an EXT-X-BYTERANGE segment, which bytes.
public struct SegmentTarget: Sendable, Hashable {
    /// The absolute URL after variable substitution and RFC 3986 resolution.
    public var url: String
    /// The segment's byte range, with its offset made explicit, or `nil` for the whole resource.
    public var byteRange: ByteRange?

    /// Creates a target.
    /// - Parameters:
    ///   - url: the absolute URL.
    ///   - byteRange: the byte range, offset explicit.
    public init(url: String, byteRange: ByteRange?) {
        self.url = url
        self.byteRange = byteRange
    }
}

extension Playlist {
    /// The target of every media segment, in order, from one pass over the lines: what ``references(playlistURL:imports:)``
    /// gives for segments, without building a ``Segment`` per line, so that a playlist of a million segments costs
    /// a URL each and no more.
    ///
    /// EXT-X-GAP segments and URIs that cannot be resolved are left out.
    /// - Parameters:
    ///   - playlistURL: the absolute URL the playlist was fetched from.
    ///   - imports: the parent multivariant playlist's variables, for EXT-X-DEFINE:IMPORT.
    ///   - limit: the most targets returned; the walk stops there.
    ///   - newest: keep only this many of the last targets instead (the whole playlist is walked, a URL at a time).
    /// - Returns: the targets, at most `limit` (or `newest`).
    public func segmentTargets(
        playlistURL: String, imports: [String: String] = [:], limit: Int = .max, newest: Int? = nil
    ) -> [SegmentTarget] {
        guard kind == .media, let base = BaseURL(playlistURL) else { return [] }
        let hasVariables = hasVariableReference
        let values =
            hasVariables ? VariableSubstitution.values(of: self, query: base.queryString, imports: imports) : [:]
        var targets: [SegmentTarget] = []
        var pendingRange: PlaylistByteRange?
        var gap = false
        var nextOffset: [String: Int] = [:]
        var substituted = ByteWriter(capacity: 256)
        var scratch = ByteWriter(capacity: 256)
        let allLines = lines
        for index in records.indices where newest != nil || targets.count < limit {
            let record = records[index]
            if record.kind == .tag {
                switch record.tag {
                case .byteRange:
                    if case .byteRange(let range)? = allLines[index].tag { pendingRange = range }
                case .gap: gap = true
                default: break
                }
                continue
            }
            guard record.kind == .uri, record.placeCount > 0 else { continue }
            var range: ByteRange?
            let written = pendingRange
            pendingRange = nil
            let isGap = gap
            gap = false
            if let written {
                let uri = String(decoding: source[record.trimmedStart..<record.trimmedEnd], as: UTF8.self)
                // Checked at parse time (PlaylistNumberCheck): the end fits in Int.
                range = written.resolved(offset: nextOffset[uri] ?? 0)
                if let range { nextOffset[uri] = Int(range.upperBound) }
            }
            guard !isGap else { continue }
            guard
                resolvePlace(
                    record.firstPlace, base: base, hasVariables: hasVariables, values: values,
                    substituted: &substituted, into: &scratch)
            else { continue }
            targets.append(SegmentTarget(url: String(decoding: scratch.bytes, as: UTF8.self), byteRange: range))
            if let newest, targets.count > 2 * newest + 64 { targets.removeFirst(targets.count - newest) }
        }
        if let newest { return Array(targets.suffix(newest)) }
        return targets
    }

    /// The distinct targets of the playlist's initialization sections (EXT-X-MAP), with their byte ranges, in order
    /// of first appearance: one pass over the tags, nothing built for the segments.
    ///
    /// URIs that cannot be resolved are left out.
    /// - Parameters:
    ///   - playlistURL: the absolute URL the playlist was fetched from.
    ///   - imports: the parent multivariant playlist's variables, for EXT-X-DEFINE:IMPORT.
    public func mapTargets(playlistURL: String, imports: [String: String] = [:]) -> [SegmentTarget] {
        guard kind == .media, let base = BaseURL(playlistURL) else { return [] }
        let hasVariables = hasVariableReference
        let values =
            hasVariables ? VariableSubstitution.values(of: self, query: base.queryString, imports: imports) : [:]
        var targets: [SegmentTarget] = []
        var seen: Set<SegmentTarget> = []
        var substituted = ByteWriter(capacity: 256)
        var scratch = ByteWriter(capacity: 256)
        for index in records.indices where records[index].tag == .map && records[index].placeCount > 0 {
            guard case .map(let map)? = lines[index].tag else { continue }
            guard
                resolvePlace(
                    records[index].firstPlace, base: base, hasVariables: hasVariables, values: values,
                    substituted: &substituted, into: &scratch)
            else { continue }
            let target = SegmentTarget(
                url: String(decoding: scratch.bytes, as: UTF8.self), byteRange: map.byteRange?.resolved(offset: 0))
            if seen.insert(target).inserted { targets.append(target) }
        }
        return targets
    }

    /// Resolves URI place `index` into `scratch` (emptied first), its variables substituted first when the playlist
    /// has any (into `substituted`): the one resolution of ``segmentTargets(playlistURL:imports:limit:newest:)`` and
    /// ``mapTargets(playlistURL:imports:)``.
    /// - Returns: `false` when a variable is unknown, the URI too long, or it does not resolve.
    private func resolvePlace(
        _ index: Int32, base: BaseURL, hasVariables: Bool, values: [String: [UInt8]],
        substituted: inout ByteWriter, into scratch: inout ByteWriter
    ) -> Bool {
        let place = places[Int(index)]
        substituted.removeAll()
        scratch.removeAll()
        return source.withUnsafeBufferPointer { bytes -> Bool in
            let span = place.start..<place.end
            if hasVariables, VariableSubstitution.mayHaveReference(bytes, span) {
                guard
                    VariableSubstitution.substitute(
                        bytes, span, values: values, into: &substituted, limit: RewriteLimits.default.maxURIBytes)
                        == .complete
                else { return false }
                return URLResolver.resolve(substituted.bytes, against: base, into: &scratch) != nil
            }
            return URLResolver.resolve(UnsafeBufferPointer(rebasing: bytes[span]), against: base, into: &scratch) != nil
        }
    }
}
