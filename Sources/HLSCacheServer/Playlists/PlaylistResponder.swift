import CoreMetrics
import Foundation
import HLSPlaylist
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OriginCache
import SegmentCache
import Synchronization

/// Serves playlists: reads the cached origin playlist, rewrites every URI so the player comes back to
/// hlscache, and starts read-ahead.
struct PlaylistResponder {
    /// The `Content-Type` playlists are stored and served with.
    static let contentType = ObjectKind.hlsPlaylist.contentType!
    let components: ServerComponents

    /// Serves a fresh (hit or just fetched) playlist.
    func respond(_ exchange: Exchange, key: CacheKey, response: CacheResponse, result: CacheResult) async -> Response {
        let rendered: RenderedPlaylist
        do {
            rendered = try await render(key: key, response: response)
        } catch {
            return exchange.fail(.badGateway, "\(error)")
        }
        return serve(exchange, key: key, rendered: rendered, metadata: response.metadata, result: result)
    }

    /// Serves an expired playlist because the origin failed, if it is not too old: live playlists up to three
    /// target durations since they were fetched, others without limit.
    /// - Returns: `nil` when the copy is too old or unreadable.
    func respondStale(_ exchange: Exchange, key: CacheKey, response: CacheResponse, reason: String) -> Response? {
        // A stale entry is a published file: its body reads at once.
        guard let bytes = response.withFileRegion({ region in Self.read(region) }) ?? nil,
            let rendered = try? render(key: key, bytes: bytes)
        else { return nil }
        let age = Date().timeIntervalSince(response.metadata.fetchedAt)
        if rendered.isLive, age > PlaylistFreshness.liveStaleLimitSeconds(targetDuration: rendered.targetDuration) {
            return nil
        }
        components.logger.warning(
            "serving stale playlist",
            metadata: ["url": "\(key.url)", "reason": "\(reason)", "age_s": "\(Int(age))"])
        return serve(exchange, key: key, rendered: rendered, metadata: response.metadata, result: .stale)
    }

    private func serve(
        _ original: Exchange, key: CacheKey, rendered: RenderedPlaylist, metadata: EntryMetadata, result: CacheResult
    ) -> Response {
        var exchange = original
        exchange.kind = .playlist
        exchange.stream = key.url
        Self.startReadAhead(after: rendered, components: components)
        var headers = Self.headers(rendered, metadata: metadata)
        switch rendered.body {
        case .memory(let buffer):
            return exchange.finish(.ok, body: buffer, contentType: Self.contentType, result: result, headers: headers)
        case .file(let file):
            headers[.contentType] = Self.contentType
            return exchange.stream(.ok, headers: headers, contentLength: Int64(file.length), result: result) { writer in
                try await Self.send(file, to: &writer)
            }
        }
    }

    /// Writes a rendering kept on disk, a megabyte at a time.
    private static func send(_ file: RenderedFile, to writer: inout any ResponseBodyWriter) async throws -> Int64 {
        var sent = 0
        while sent < file.length {
            var buffer = ByteBuffer()
            let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: min(1 << 20, file.length - sent)) {
                pread(file.descriptor, $0.baseAddress!, min($0.count, file.length - sent), off_t(sent))
            }
            guard count > 0 else { throw RenderedFileError(errno: errno) }
            try await writer.write(buffer)
            sent += count
        }
        return Int64(sent)
    }

    /// Reads ahead the newest segments of a live playlist as it is served.
    static func startReadAhead(after rendered: RenderedPlaylist, components: ServerComponents) {
        if let readAhead = components.readAhead, rendered.isLive {
            readAhead.enqueue(rendered.newestSegments)
        }
    }

    /// `Cache-Control` and `Last-Modified` of a served playlist.
    static func headers(_ rendered: RenderedPlaylist, metadata: EntryMetadata) -> HTTPFields {
        var headers = HTTPFields()
        headers[.cacheControl] = cacheControl(rendered, metadata: metadata)
        if let lastModified = metadata.lastModified { headers[.lastModified] = lastModified }
        return headers
    }

    /// What players may cache the playlist for: live, half a target duration (at least 1 s); others, what
    /// remains of their freshness, at most a minute for multivariant playlists.
    private static func cacheControl(_ rendered: RenderedPlaylist, metadata: EntryMetadata) -> String {
        if rendered.isLive {
            return
                "public, max-age=\(max(1, Int(PlaylistFreshness.liveFreshSeconds(targetDuration: rendered.targetDuration))))"
        }
        let remaining =
            metadata.expiry.map { Int(min(max(0, $0.timeIntervalSinceNow), Double(CacheDirectives.maxDeltaSeconds))) }
            ?? 60
        return "public, max-age=\(rendered.isMultivariant ? min(60, remaining) : remaining)"
    }

    private func render(key: CacheKey, response: CacheResponse) async throws -> RenderedPlaylist {
        if let rendered = components.playlists.rendering(of: key, fetchedAt: response.metadata.fetchedAt) {
            return rendered
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(clamping: min(response.metadata.contentLength ?? 0, 64 << 20)))
        for try await chunk in response.body { bytes.append(contentsOf: chunk) }
        let rendered = try render(key: key, bytes: bytes)
        if response.isStored {
            components.playlists.keep(rendered, of: key, fetchedAt: response.metadata.fetchedAt)
        }
        return rendered
    }

    /// Parses and rewrites a playlist, and records its segments for read-ahead.
    func render(key: CacheKey, bytes: [UInt8]) throws -> RenderedPlaylist {
        components.metrics.playlistRenders.increment()
        let playlist: Playlist
        do throws(PlaylistError) {
            playlist = try Playlist(parsing: bytes)
        } catch {
            throw InvalidPlaylistError(url: key.url, error: error)
        }
        let body: RenderedBody
        do throws(PlaylistError) {
            let playlists = components.playlists
            body = try playlist.withRewritten(playlistURL: key.url, mapping: mapping) { playlists.body(for: $0) }
        } catch {
            throw InvalidPlaylistError(url: key.url, error: error)
        }
        var newest: [CacheKey] = []
        if playlist.kind == .media {
            let count = components.configuration.prefetchCount
            let (segments, isComplete) = SegmentIndex.segmentKeys(of: playlist, url: key.url, newest: count)
            if isComplete {
                components.segmentIndex.record(playlist: key.url, segments: segments, isVOD: !playlist.isLive)
            }
            newest = Array(segments.suffix(count))
        }
        return RenderedPlaylist(
            body: body, isLive: playlist.isLive, isMultivariant: playlist.kind == .multivariant,
            targetDuration: playlist.targetDuration, newestSegments: newest)
    }

    /// Proxy URLs for every URI; in reverse mode, the origin's own URLs become plain paths on hlscache.
    private var mapping: URIMapping {
        let base = components.configuration.publicBaseURL ?? ""
        guard let reverse = components.configuration.reverseOrigin else { return .proxy(base: base) }
        let origin = OriginTarget.normalizedOrigin(reverse)
        let publicBase = ProxyURLBase.normalized(base)
        return .custom { url in
            if url.hasPrefix(origin), url.dropFirst(origin.count).first == "/" {
                return publicBase + url.dropFirst(origin.count)
            }
            return ProxyURL.make(origin: url, base: base)
        }
    }

    private static func read(_ region: CacheFileRegion) -> [UInt8]? {
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

/// A rendering kept on disk could not be read back (an I/O error).
struct RenderedFileError: Error, CustomStringConvertible {
    let errno: Int32
    var description: String { "cannot read a rendered playlist back from disk (errno \(errno))" }
}

/// A public base URL without its trailing slashes.
enum ProxyURLBase {
    static func normalized(_ base: String) -> String {
        var base = Substring(base)
        while base.hasSuffix("/") { base = base.dropLast() }
        return String(base)
    }
}
