import Foundation
import HTTPTypes
import OriginCache
import SegmentCache

extension Answer {
    /// The answer for a rewritten manifest (an HLS playlist or a DASH MPD), and the read-ahead of a live playlist's newest segments.
    /// - Parameters:
    ///   - rendered: the rewritten playlist.
    ///   - metadata: the entry's metadata (its expiry and `Last-Modified`).
    ///   - result: how the cache served it.
    ///   - record: the access record; its kind and stream are filled in.
    ///   - components: read-ahead.
    /// - Returns: `nil` when a rendering on disk cannot be opened again (out of descriptors).
    static func playlist(
        _ rendered: RenderedPlaylist, metadata: EntryMetadata, result: CacheResult, record: AccessRecord,
        components: ServerComponents
    ) -> Answer? {
        var body = Body.none
        if record.method != "HEAD" {
            switch rendered.body {
            case .memory(let buffer):
                body = .memory(buffer)
            case .file(let file):
                guard
                    let slice = FileSlice(
                        duplicating: file.descriptor, offset: 0, length: Int64(file.length), url: metadata.key.url)
                else { return nil }
                body = .file(slice)
            }
        }
        if let readAhead = components.readAhead, rendered.isLive, rendered.readAheadQueued.claim() {
            readAhead.enqueue(rendered.newestSegments, after: ReadAhead.liveVersionDelay)
        }
        let length = Int64(rendered.body.length)
        if result != .stale, let made = rendered.hitFields(lastModified: metadata.lastModified) {
            return .playlist(made, body: body, length: length, url: metadata.key.url, result: result, record: record)
        }
        var record = record
        record.kind = .playlist
        record.stream = metadata.key.url
        // Appended to a fresh list (no field to replace), from fields made once where they can be; the same fields,
        // in the same order, as ``RenderedPlaylist/hitFields(lastModified:)``.
        var headers = HTTPFields()
        headers.reserveCapacity(12)
        headers.append(rendered.contentTypeField)
        headers.append(RenderedPlaylist.varyVia)
        headers.append(
            rendered.liveCacheControlField
                ?? HTTPField(name: .cacheControl, value: playlistCacheControl(rendered, metadata: metadata)))
        if let lastModified = metadata.lastModified {
            headers.append(HTTPField(name: .lastModified, value: lastModified))
        }
        if let cmsd = rendered.cmsdField { headers.append(cmsd) }
        if result == .stale {
            headers.append(HTTPField(name: .age, value: String(max(0, Int(-metadata.fetchedAt.timeIntervalSinceNow)))))
        }
        return Answer(.ok, headers: headers, body: body, length: length, result: result, record: record)
    }

    /// The answer for a rewritten live manifest sent fresh, from its own fields made once (the one shape of
    /// ``playlist(_:metadata:result:record:components:)``'s answers; a ``KeptHit`` keeps them).
    /// - Parameters:
    ///   - fields: ``RenderedPlaylist/hitFields(lastModified:)``.
    ///   - body: the rendering (none for HEAD).
    ///   - length: the rendering's length.
    ///   - url: the playlist's URL (the record's stream).
    ///   - result: how the cache served it.
    ///   - record: the access record; its kind and stream are filled in.
    static func playlist(
        _ fields: MadeFields, body: Body, length: Int64, url: String, result: CacheResult, record: AccessRecord
    ) -> Answer {
        var record = record
        record.kind = .playlist
        record.stream = url
        return Answer(.ok, made: fields, body: body, length: length, result: result, record: record)
    }

    /// What players may cache the playlist for: live, half a target duration (at least 1 s); others, what
    /// remains of their freshness, at most a minute for multivariant playlists.
    private static func playlistCacheControl(_ rendered: RenderedPlaylist, metadata: EntryMetadata) -> String {
        if rendered.isLive {
            return "public, max-age=\(max(1, Int(rendered.liveFreshSeconds)))"
        }
        let remaining =
            metadata.expiry.map { Int(min(max(0, $0.timeIntervalSinceNow), Double(CacheDirectives.maxDeltaSeconds))) }
            ?? 60
        return "public, max-age=\(rendered.isMultivariant ? min(60, remaining) : remaining)"
    }
}
