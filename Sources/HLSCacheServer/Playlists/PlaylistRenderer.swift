import ByteRanges
import CoreMetrics
import DASHManifest
import Foundation
import HLSPlaylist
import ManifestURLs
import NIOCore
import OriginCache
import SegmentCache

/// Renders playlists: reads the cached origin playlist, rewrites every URI so the player comes back to hlscache,
/// records its segments for read-ahead, and keeps the rendering for the next hits of the same origin version.
///
/// Every rendering shows the server's view (`--manifest-filter`), narrowed by the request's own (its `hlscache.*`
/// parameters, ``view``): a rendering with a view of its own is kept apart from the plain one, under its view's
/// ``ManifestView/canonicalQuery``, and a multivariant playlist's URIs carry that query to its media playlists.
struct PlaylistRenderer {
    let components: ServerComponents
    /// The request's own view, if it has one.
    var view: ManifestView?

    /// The view the rendering shows: the server's, narrowed by the request's.
    private var shownView: ManifestView {
        let server = components.configuration.manifestFilter
        return view.map { server.narrowed(by: $0) } ?? server
    }

    /// The key a rendering of `key` is kept under: `key` itself without a view of the request's own.
    private func renderingKey(_ key: CacheKey) -> CacheKey {
        guard let view else { return key }
        // A space never occurs in a URL of a key: no origin object's key is ever this one.
        return CacheKey(url: key.url + " " + view.canonicalQuery, range: key.range, fetchURL: key.fetchURL)
    }

    /// The rendering of a fresh (hit or just fetched) playlist: the one kept for its origin version, or a new one.
    func rendering(key: CacheKey, response: CacheResponse) async throws -> RenderedPlaylist {
        let keptKey = renderingKey(key)
        if let rendered = components.memory.playlists.rendering(of: keptKey, fetchedAt: response.metadata.fetchedAt) {
            return rendered
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(clamping: min(response.metadata.contentLength ?? 0, 64 << 20)))
        for try await chunk in response.body { bytes.append(contentsOf: chunk) }
        let rendered: RenderedPlaylist
        if bytes.count > Self.renderedOnPoolBytes || response.metadata.objectKind == .dashManifest {
            // A large playlist, or any MPD (a few hundred bytes of template can list the expansion's limit of
            // segments: some 0.3 s, `dash_expand_100k_ms`), renders on the concurrency pool, not on the event loop
            // whose hits would wait for it.
            let metadata = response.metadata
            let bytes = bytes
            let render = { @Sendable in
                try await withTaskExecutorPreference(globalConcurrentExecutor) {
                    try self.render(key: key, metadata: metadata, bytes: bytes)
                }
            }
            // A request's own view waits its turn: views named one after another do not take every core.
            rendered = try await view == nil ? render() : components.viewRenders.run(render)
        } else {
            rendered = try render(key: key, metadata: response.metadata, bytes: bytes)
        }
        if response.isStored {
            components.memory.playlists.keep(rendered, of: keptKey, fetchedAt: response.metadata.fetchedAt)
        }
        return rendered
    }

    /// The rendering of an expired playlist, served because the origin failed, if it is not too old: live
    /// playlists up to three target durations since they were fetched, others without limit.
    /// - Returns: the rendering and its age in seconds; `nil` when the copy is too old or unreadable.
    func staleRendering(key: CacheKey, response: CacheResponse) -> (RenderedPlaylist, age: Double)? {
        let fetchedAt = response.metadata.fetchedAt
        let keptKey = renderingKey(key)
        var kept = components.memory.playlists.rendering(of: keptKey, fetchedAt: fetchedAt)
        if kept == nil {
            // A stale entry is a published file: its body reads at once.
            guard let bytes = response.withFileRegion({ region in Self.read(region) }) ?? nil,
                let rendered = try? render(key: key, metadata: response.metadata, bytes: bytes)
            else { return nil }
            components.memory.playlists.keep(rendered, of: keptKey, fetchedAt: fetchedAt)
            kept = rendered
        }
        guard let rendered = kept else { return nil }
        let age = Date().timeIntervalSince(response.metadata.fetchedAt)
        if rendered.isLive, age > rendered.liveStaleLimitSeconds {
            return nil
        }
        return (rendered, age)
    }

    /// Parses and rewrites a manifest (an MPD, else an HLS playlist) stored under `key`, its references resolved
    /// from where the origin answered (``EntryMetadata/baseURL``, after a redirect) or else the key's URL.
    func render(key: CacheKey, metadata: EntryMetadata, bytes: [UInt8]) throws -> RenderedPlaylist {
        components.metrics.playlistRenders.increment()
        let base = metadata.baseURL ?? key.url
        if metadata.objectKind == .dashManifest { return try renderMPD(key: key, base: base, bytes: bytes) }
        return try renderPlaylist(key: key, base: base, bytes: bytes, fetchedAt: metadata.fetchedAt)
    }

    /// Rewrites an MPD: every URL a player fetches mapped like a playlist's URIs.
    private func renderMPD(key: CacheKey, base: String, bytes: [UInt8]) throws -> RenderedPlaylist {
        if shownView.delaySeconds != nil || shownView.start != nil {
            throw ManifestViewError.unsupported(
                "hlscache.delay and hlscache.start apply to HLS playlists: the live history does not keep DASH MPDs")
        }
        let rewritten: (bytes: [UInt8], mpd: MPD)
        do throws(MPDError) {
            rewritten = try MPDManifest.rewrite(bytes, url: base, mapping: mapping, view: shownView)
        } catch {
            if let view = error.view { throw view }
            throw InvalidMPDError(url: key.url, error: error)
        }
        let body = rewritten.bytes.withUnsafeBufferPointer { components.memory.playlists.body(for: $0) }
        indexSegments(of: rewritten.mpd, url: key.url, base: base)
        let period = PlaylistFreshness.dynamicFreshSeconds(minimumUpdatePeriod: rewritten.mpd.minimumUpdatePeriod)
        return RenderedPlaylist(
            cmsd: components.cmsd,
            body: body, contentType: MPDManifest.contentType, isLive: rewritten.mpd.type == .dynamic,
            isMultivariant: false, liveFreshSeconds: period, liveStaleLimitSeconds: 3 * period, newestSegments: [])
    }

    /// Records each Representation of an MPD in the segment index, as a playlist of its own
    /// (`<mpd>#<period>/<representation>`), so that read-ahead and the status page follow DASH streams too: a
    /// segment served reads ahead the ones the MPD lists after it (a dynamic MPD's SegmentTimeline or SegmentList
    /// lists what is published; a `$Number$` template of a dynamic MPD, whose segments it does not list, is not
    /// indexed).
    private func indexSegments(of mpd: MPD, url: String, base: String) {
        guard let representations = try? mpd.objectsByRepresentation(documentURL: base) else { return }
        let policy = components.origin.keys
        func key(of object: MPDObject) -> CacheKey? {
            guard let range = object.range else { return policy.key(for: object.url) }
            return ByteRange(offset: range.lowerBound, length: range.upperBound - range.lowerBound + 1).map {
                policy.key(for: object.url, range: $0)
            }
        }
        for (id, objects) in representations {
            components.cmsd?.initSections.note(objects.filter { $0.role == .initialization }.compactMap(key))
            let keys = objects.filter { $0.role == .media }.compactMap(key)
            if mpd.type == .dynamic { components.cache.dropNegativeEntries(keys.suffix(Self.negativeCheckCount)) }
            guard keys.count <= SegmentIndex.maxSegmentsPerPlaylist else { continue }
            components.segmentIndex.record(playlist: url + "#" + id, segments: keys, readsAhead: true)
        }
    }

    /// Parses and rewrites an HLS playlist, and records its segments for read-ahead.
    private func renderPlaylist(
        key: CacheKey, base: String, bytes: [UInt8], fetchedAt: Date
    ) throws -> RenderedPlaylist {
        var playlist: Playlist
        do throws(PlaylistError) {
            playlist = try Playlist(parsing: bytes)
        } catch {
            throw InvalidPlaylistError(url: key.url, error: error)
        }
        let shown = shownView
        if playlist.kind == .media {
            playlist = try LiveHistoryViews(components: components).playlist(
                playlist, url: key.url, base: base, fetchedAt: fetchedAt, view: shown)
        }
        if !shown.isEmpty { playlist = try playlist.viewed(by: shown) }
        var mapping = mapping
        if let view, playlist.kind == .multivariant {
            // Its media playlists follow it in the request's view (their window, delay, start).
            let plain = mapping
            mapping = .custom { url in plain.map(url).map(view.carried(by:)) }
        }
        let body: RenderedBody
        do throws(PlaylistError) {
            let playlists = components.memory.playlists
            body = try playlist.withRewritten(playlistURL: base, mapping: mapping) { playlists.body(for: $0) }
        } catch {
            throw InvalidPlaylistError(url: key.url, error: error)
        }
        var newest: [CacheKey] = []
        if playlist.kind == .media, let cmsd = components.cmsd {
            let policy = components.origin.keys
            cmsd.initSections.note(
                playlist.mapTargets(playlistURL: base).compactMap { target in
                    guard let range = target.byteRange else { return policy.key(for: target.url) }
                    return range.length > 0 ? policy.key(for: target.url, range: range) : nil
                })
        }
        if playlist.kind == .media {
            let count = components.configuration.readAheadCount
            let (segments, isComplete) = SegmentIndex.segmentKeys(
                of: playlist, url: base, newest: count, policy: components.origin.keys)
            // A view's rendering may list fewer: the plain one's record stands for the playlist.
            if isComplete, view == nil {
                components.segmentIndex.record(playlist: key.url, segments: segments, readsAhead: !playlist.isLive)
            }
            newest = Array(segments.suffix(count))
            if playlist.isLive {
                // A segment asked for before the origin published it left a 404 behind: this version lists it, so
                // the origin has it now (the newest few: those a player can have asked for too early).
                components.cache.dropNegativeEntries(segments.suffix(Self.negativeCheckCount))
            }
        }
        return RenderedPlaylist(
            cmsd: components.cmsd,
            body: body, contentType: ObjectKind.hlsPlaylist.contentType!, isLive: playlist.isLive,
            isMultivariant: playlist.kind == .multivariant,
            liveFreshSeconds: PlaylistFreshness.liveFreshSeconds(targetDuration: playlist.targetDuration),
            liveStaleLimitSeconds: PlaylistFreshness.liveStaleLimitSeconds(targetDuration: playlist.targetDuration),
            newestSegments: newest)
    }

    /// The size past which a playlist is rendered on the concurrency pool rather than where its request runs (MPDs
    /// always are).
    static let renderedOnPoolBytes = 256 << 10

    /// How many of a live manifest's newest segments are looked at for a remembered 404 at each new version.
    static let negativeCheckCount = 8

    /// The URIs players are given (``PlayerURIs``), with the public base URL in front.
    private var mapping: URIMapping {
        PlayerURIs.mapping(components.configuration, base: components.configuration.publicBaseURL ?? "")
    }

    private static func read(_ region: EntryFileRegion) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: Int(region.length))
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                pread(
                    region.descriptor, buffer.baseAddress! + done, buffer.count - done,
                    off_t(region.offset) + off_t(done))
            }
            guard count > 0 else { return nil }
            done += count
        }
        return bytes
    }
}

/// A public base URL without its trailing slashes.
enum ProxyURLBase {
    static func normalized(_ base: String) -> String {
        var base = Substring(base)
        while base.hasSuffix("/") { base = base.dropLast() }
        return String(base)
    }
}
