import CoreMetrics
import Foundation
import HLSPlaylist
import OriginClient
import SegmentCache

/// The cache's source of objects: fetches a key from its origin with the ``OriginFetching`` client and
/// gives the cache what to store.
///
/// - A ranged key becomes a `Range` request; a `206` must carry exactly that range, a `200` (an origin that
///   ignores `Range`) is cut down to it.
/// - A playlist (by `Content-Type`, a `.m3u8` path, or a body starting with `#EXTM3U`) is read whole, parsed,
///   and stored with the expiry ``PlaylistFreshness`` gives it and the `Content-Type`
///   ``PlaylistResponder/contentType``; one that does not parse throws ``InvalidPlaylistError``.
/// - Anything else is stored without expiry (segments, keys and init sections do not change), unless the
///   origin says `no-store`.
/// - Non-2xx answers are passed through unstored.
struct OriginObjectSource: ObjectSource {
    let client: any OriginFetching
    /// The client for LL-HLS blocking playlist reloads, whose first byte may take several target durations.
    let blockingClient: any OriginFetching
    let freshness: PlaylistFreshness
    let parseLimits: ParseLimits
    let metrics: ServerMetrics

    func fetch(_ key: CacheKey) async throws -> SourceResponse {
        var request = OriginRequest(url: key.url)
        if let range = key.range {
            guard range.length > 0 else {
                throw OriginError.invalidRequest(url: key.url, reason: "empty byte range \(range)")
            }
            request.byteRange = .closed(range.offset...(range.upperBound - 1))
        }
        let blocking = Self.isBlockingReload(key.url)
        let response: OriginResponse
        do {
            response = try await (blocking ? blockingClient : client).fetch(request)
        } catch let error as OriginError {
            metrics.originRequest(status: error.status.map(String.init) ?? error.label)
            throw error
        }
        metrics.originRequest(status: String(response.status))
        let directives = CacheDirectives(header: response.header)
        guard response.isSuccess else {
            return SourceResponse(
                status: response.status, cacheable: false, contentType: "text/plain",
                body: SourceBody(chunks: []))
        }
        var chunks = response.body.makeAsyncIterator()
        let first = try await chunks.next()
        let contentType = response.header("content-type")
        if Self.looksLikePlaylist(url: key.url, contentType: contentType, firstChunk: first ?? []) {
            return try await playlist(key, response: response, first: first, rest: &chunks, directives: directives)
        }
        var contentLength = response.contentLength
        var completeLength: Int64?
        var body = CountedBody(first: first, rest: chunks, metrics: metrics, skip: 0, limit: nil)
        let cacheable = !directives.noStore
        if let range = key.range {
            if response.status == 206 {
                let contentRange = ContentRange(header: response.header("content-range") ?? "")
                guard let contentRange, contentRange.first == range.offset, contentRange.last <= range.upperBound - 1,
                    contentRange.last == range.upperBound - 1 || contentRange.completeLength == contentRange.last + 1
                else {
                    throw OriginError.protocolError(
                        url: key.url,
                        detail:
                            "origin answered Range \(range) with Content-Range \(response.header("content-range") ?? "none")"
                    )
                }
                completeLength = contentRange.completeLength
                if contentRange.last < range.upperBound - 1 {
                    // A range running past the end, clipped by the origin: relay it, but the key promises more
                    // bytes than there are, so do not store it.
                    return SourceResponse(
                        status: 200, cacheable: false,
                        contentType: contentType ?? ContentTypes.byExtension(of: key.url),
                        contentLength: contentRange.length, completeLength: completeLength,
                        body: SourceBody(CountedBody(first: first, rest: chunks, metrics: metrics, skip: 0, limit: nil))
                    )
                }
            } else {
                // 200: the origin ignored Range and sends the whole object; keep the requested part.
                completeLength = response.contentLength
                if let whole = response.contentLength, whole < range.upperBound {
                    throw OriginError.protocolError(
                        url: key.url, detail: "range \(range) lies beyond the object's \(whole) bytes")
                }
                body = CountedBody(
                    first: first, rest: chunks, metrics: metrics, skip: range.offset, limit: range.length)
            }
            contentLength = range.length
        }
        return SourceResponse(
            status: 200,
            cacheable: cacheable,
            contentType: contentType ?? ContentTypes.byExtension(of: key.url),
            contentLength: contentLength,
            etag: response.header("etag"),
            lastModified: response.header("last-modified"),
            expiry: nil,
            completeLength: completeLength,
            body: SourceBody(body)
        )
    }

    private func playlist(
        _ key: CacheKey, response: OriginResponse, first: [UInt8]?, rest: inout OriginBody.AsyncIterator,
        directives: CacheDirectives
    ) async throws -> SourceResponse {
        var bytes = first ?? []
        if let announced = response.header("content-length").flatMap({ Int($0) }), announced > bytes.count {
            bytes.reserveCapacity(min(announced, parseLimits.maxBodyBytes))
        }
        while let chunk = try await rest.next() {
            bytes.append(contentsOf: chunk)
            guard bytes.count <= parseLimits.maxBodyBytes else {
                throw InvalidPlaylistError(
                    url: key.url, error: .bodyTooLarge(bytes: bytes.count, limit: parseLimits.maxBodyBytes))
            }
        }
        metrics.originBytes.increment(by: bytes.count)
        let playlist: Playlist
        do throws(PlaylistError) {
            playlist = try Playlist(parsing: bytes, limits: parseLimits)
        } catch {
            throw InvalidPlaylistError(url: key.url, error: error)
        }
        let expiry = freshness.expiry(of: playlist, directives: directives, now: Date())
        return SourceResponse(
            status: 200,
            cacheable: !directives.noStore,
            contentType: PlaylistResponder.contentType,
            contentLength: Int64(bytes.count),
            etag: response.header("etag"),
            lastModified: response.header("last-modified"),
            expiry: expiry,
            body: SourceBody(chunks: [bytes])
        )
    }

    /// Whether a URL is an LL-HLS blocking playlist reload (`_HLS_msn` in its query).
    static func isBlockingReload(_ url: String) -> Bool {
        guard let query = url.firstIndex(of: "?") else { return false }
        return url[query...].contains("_HLS_msn=")
    }

    /// Whether an answer is a playlist: by type, by a `.m3u8`/`.m3u` path, or by its first bytes.
    static func looksLikePlaylist(url: String, contentType: String?, firstChunk: [UInt8]) -> Bool {
        if let contentType = contentType?.lowercased(), contentType.contains("mpegurl") { return true }
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        let lowered = path.lowercased()
        if lowered.hasSuffix(".m3u8") || lowered.hasSuffix(".m3u") { return true }
        var bytes = firstChunk[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        return bytes.starts(with: Array("#EXTM3U".utf8))
    }
}

/// An origin answer that should have been a playlist and does not parse.
struct InvalidPlaylistError: Error, CustomStringConvertible {
    /// The origin URL.
    let url: String
    /// Why it does not parse, with the line.
    let error: PlaylistError

    var description: String { "origin returned an invalid playlist: \(error.description)" }
}

/// An origin body that counts the bytes it passes on, and optionally keeps only a window of them.
struct CountedBody: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    typealias Failure = any Error

    let first: [UInt8]?
    let rest: OriginBody.AsyncIterator
    let metrics: ServerMetrics
    /// Bytes to drop from the start.
    let skip: Int64
    /// Bytes to keep after those, or `nil` for all.
    let limit: Int64?

    func makeAsyncIterator() -> Iterator {
        Iterator(pending: first, rest: rest, metrics: metrics, skip: skip, remaining: limit)
    }

    struct Iterator: AsyncIteratorProtocol {
        var pending: [UInt8]?
        var rest: OriginBody.AsyncIterator
        let metrics: ServerMetrics
        var skip: Int64
        var remaining: Int64?

        mutating func next() async throws -> [UInt8]? {
            while true {
                if remaining == 0 { return nil }
                var chunk: [UInt8]
                if let pending {
                    chunk = pending
                    self.pending = nil
                } else {
                    guard let next = try await rest.next() else { return nil }
                    chunk = next
                }
                metrics.originBytes.increment(by: chunk.count)
                if skip > 0 {
                    let dropped = Int(Swift.min(skip, Int64(chunk.count)))
                    skip -= Int64(dropped)
                    chunk.removeFirst(dropped)
                }
                if let left = remaining, Int64(chunk.count) > left { chunk.removeLast(chunk.count - Int(left)) }
                if let left = remaining { remaining = left - Int64(chunk.count) }
                if !chunk.isEmpty { return chunk }
            }
        }
    }
}
