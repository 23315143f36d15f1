import ByteRanges
import DASHManifest
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
///   of ``ObjectKind/hlsPlaylist``; one that does not parse throws ``InvalidPlaylistError``.
/// - Anything else is stored without expiry (segments, keys and init sections do not change), unless the
///   origin says `no-store`.
/// - Non-2xx answers are passed through unstored, except a 404 or 410 for an object that is not a manifest, which
///   is remembered for `negativeTTL` (0 when segment keys leave query parameters out: another viewer's token may
///   work), unless the fetch carried a player's CMCD (``CacheKey/originAdditions``): that failure is that player's.
/// - A manifest whose key lost query parameters by the segment list (a playlist at a path without a manifest
///   extension) is relayed, not stored: it would carry one viewer's tokens to the others.
/// - The request goes to the key's ``CacheKey/fetchURL``, with the key's ``CacheKey/originAdditions`` (a player's CMCD,
///   passed on); everything stored and logged names its ``CacheKey/url``.
/// - With a ``ParentTier`` it goes to the parent's URL for it instead, with this node's `Via`; the parent's
///   `X-Cache` is passed on as ``SourceResponse/upstreamCache``, and its `508` becomes ``ParentLoopError``.
struct OriginObjectSource: ObjectSource {
    let client: any OriginFetching
    /// The client for LL-HLS blocking playlist reloads, whose first byte may take several target durations.
    let blockingClient: any OriginFetching
    let freshness: PlaylistFreshness
    let parseLimits: ParseLimits
    /// How long a 404 or 410 for a non-manifest object is stored (0: not at all).
    let negativeTTL: Duration
    /// How long a manifest fetch may take in all.
    let deadlines: ManifestDeadlines
    let metrics: any OriginCacheMetrics
    /// The parent hlscache every fetch goes through (`--parent`), if any.
    var parent: ParentTier? = nil
    /// This node's name, sent in `Via` on every origin request (a server's; `nil` for `prefetch`), so that a
    /// redirect or a target that leads back to the node is refused there as a loop instead of recursing.
    var nodeName: String? = nil

    func fetch(_ key: CacheKey) async throws -> SourceResponse {
        let fetchURL = key.originAdditions?.url(key.fetchURL) ?? key.fetchURL
        var request = OriginRequest(url: fetchURL)
        if let parent {
            guard let url = parent.url(for: fetchURL) else {
                throw OriginError.invalidRequest(url: key.url, reason: "not an absolute http(s) URL")
            }
            request.url = url
            request.headers.append(parent.via)
        } else if let nodeName {
            request.headers.append(FleetHop.via(nodeName: nodeName))
        }
        if let fields = key.originAdditions?.fields { request.headers += fields }
        if let range = key.range {
            guard range.length > 0 else {
                throw OriginError.invalidRequest(url: key.url, reason: "empty byte range \(range)")
            }
            request.byteRange = RequestedRange(range)
        }
        let blocking = BlockingReload.isBlockingReload(key.fetchURL)
        let guess = ObjectKind.guess(url: key.url)
        if !blocking {
            request.totalTimeout = deadlines.deadline(for: key.url, guessedManifest: guess.isManifest)
        }
        let response: OriginResponse
        do {
            response = try await (blocking ? blockingClient : client).fetch(request)
        } catch let error as OriginError {
            metrics.countOriginRequest(status: error.status.map(String.init) ?? error.label)
            throw error
        }
        metrics.countOriginRequest(status: String(response.status))
        guard let parent else { return try await answer(key, response: response, guess: guess) }
        if response.status == 508 {
            throw ParentLoopError(url: key.url, parent: parent.base, reason: await Self.firstLine(of: response.body))
        }
        var answer = try await answer(key, response: response, guess: guess)
        answer.upstreamCache = response.header("x-cache")
        return answer
    }

    /// What the cache stores (or relays) of the origin's `response` for `key`.
    private func answer(_ key: CacheKey, response: OriginResponse, guess: ObjectKind) async throws -> SourceResponse {
        let directives = CacheDirectives(header: response.header)
        guard response.isSuccess else {
            // A failure answered to one player's CMCD (passed on) is that player's: an origin that acts on CMCD must
            // not make every player's request fail.
            let negative =
                [404, 410].contains(response.status) && negativeTTL > .zero && !guess.isManifest
                && key.originAdditions == nil
            // A live stream's segment asked for before it is published: remembered for half a refresh period at
            // most, so that it is fetched again before the next playlist can list it.
            let seconds = deadlines.liveSegmentPeriod(of: key.url).map { min(negativeTTL.seconds, $0 / 2) }
            return SourceResponse(
                status: response.status, cacheable: negative && !directives.noStore, contentType: "text/plain",
                contentLength: 0,
                expiry: negative ? Date().addingTimeInterval(seconds ?? negativeTTL.seconds) : nil,
                kind: guess.rawValue, body: SourceBody(chunks: []))
        }
        var chunks = response.body.makeAsyncIterator()
        let contentType = response.header("content-type")
        // The body's first bytes are waited for only when the head cannot tell what the answer is: a segment's
        // requester has its head as soon as the origin's head is in.
        var first: [UInt8]?
        let kind: ObjectKind
        if let told = ObjectKind.classify(url: key.url, contentType: contentType) {
            kind = told
        } else {
            first = try await chunks.next()
            kind = ObjectKind.classify(url: key.url, contentType: contentType, firstBytes: first ?? [])
        }
        if kind.isManifest {
            return try await manifest(
                key, kind: kind, guessedManifest: guess.isManifest, response: response, first: first, rest: &chunks,
                directives: directives)
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
                        contentType: contentType ?? MediaTypes.byExtension(of: key.url),
                        contentLength: contentRange.length, completeLength: completeLength,
                        body: SourceBody(CountedBody(first: first, rest: chunks, metrics: metrics, skip: 0, limit: nil))
                    )
                }
            } else {
                // 200: the origin ignored Range and sends the whole object; keep the requested part.
                completeLength = response.contentLength
                if let whole = response.contentLength, whole < range.upperBound {
                    // RFC 9110 §14.1.2: a range running past the end is served to the end (relayed, not stored:
                    // the key promises more bytes); one starting past it is not satisfiable.
                    guard range.offset < whole else {
                        return SourceResponse(
                            status: 416, cacheable: false, contentType: "text/plain", contentLength: 0, expiry: nil,
                            kind: kind.rawValue, body: SourceBody(chunks: []))
                    }
                    return SourceResponse(
                        status: 200, cacheable: false,
                        contentType: contentType ?? MediaTypes.byExtension(of: key.url),
                        contentLength: whole - range.offset, completeLength: whole,
                        body: SourceBody(
                            CountedBody(
                                first: first, rest: chunks, metrics: metrics, skip: range.offset,
                                limit: whole - range.offset)))
                }
                body = CountedBody(
                    first: first, rest: chunks, metrics: metrics, skip: range.offset, limit: range.length)
            }
            contentLength = range.length
        }
        return SourceResponse(
            status: 200,
            cacheable: cacheable,
            contentType: contentType ?? MediaTypes.byExtension(of: key.url),
            contentLength: contentLength,
            etag: response.header("etag"),
            lastModified: response.header("last-modified"),
            expiry: nil,
            completeLength: completeLength,
            kind: kind.rawValue,
            body: SourceBody(body)
        )
    }

    /// A manifest, read whole (bounded), parsed, and stored with the expiry ``PlaylistFreshness`` gives it.
    /// - Throws: ``InvalidPlaylistError`` or ``InvalidMPDError`` when it does not parse or is too large.
    private func manifest(
        _ key: CacheKey, kind: ObjectKind, guessedManifest: Bool, response: OriginResponse, first: [UInt8]?,
        rest: inout OriginBody.AsyncIterator, directives: CacheDirectives
    ) async throws -> SourceResponse {
        var bytes = first ?? []
        if let announced = response.header("content-length").flatMap({ Int($0) }), announced > bytes.count {
            bytes.reserveCapacity(min(announced, parseLimits.maxBodyBytes))
        }
        while let chunk = try await rest.next() {
            bytes.append(contentsOf: chunk)
            guard bytes.count <= parseLimits.maxBodyBytes else {
                let limit = parseLimits.maxBodyBytes
                if kind == .dashManifest {
                    throw InvalidMPDError(
                        url: key.url, error: MPDError(.tooLarge, "MPD larger than \(limit) bytes"))
                }
                throw InvalidPlaylistError(url: key.url, error: .bodyTooLarge(bytes: bytes.count, limit: limit))
            }
        }
        metrics.countOriginBytes(bytes.count)
        let now = Date()
        var expiry: Date
        if kind == .dashManifest {
            do throws(MPDError) {
                let mpd = try MPDManifest.parse(bytes, url: key.url)
                expiry = freshness.expiry(of: mpd, directives: directives, now: now)
                deadlines.note(
                    key.url,
                    livePeriod: mpd.type == .dynamic
                        ? 2 * PlaylistFreshness.dynamicFreshSeconds(minimumUpdatePeriod: mpd.minimumUpdatePeriod) : nil)
            } catch {
                throw InvalidMPDError(url: key.url, error: error)
            }
        } else {
            do throws(PlaylistError) {
                let playlist = try Playlist(parsing: bytes, limits: parseLimits)
                expiry = freshness.expiry(of: playlist, directives: directives, now: now)
                if !BlockingReload.isBlockingReload(key.url) {
                    deadlines.note(key.url, livePeriod: playlist.isLive ? Double(playlist.targetDuration ?? 6) : nil)
                }
            } catch {
                throw InvalidPlaylistError(url: key.url, error: error)
            }
        }
        // Through a parent, a live manifest is as old as the parent's copy: it is fresh for what remains of that.
        if parent != nil, let remaining = directives.expiry(receivedAt: now) { expiry = min(expiry, remaining) }
        let sharedByAccident = key.fetchURL != key.url && !guessedManifest
        var answer = SourceResponse(
            status: 200,
            cacheable: !directives.noStore && !sharedByAccident,
            contentType: kind.contentType!,
            contentLength: Int64(bytes.count),
            etag: response.header("etag"),
            lastModified: response.header("last-modified"),
            expiry: expiry,
            kind: kind.rawValue,
            body: SourceBody(chunks: [bytes])
        )
        answer.baseURL = baseURL(of: response)
        return answer
    }

    /// Where a manifest's relative references resolve from when that is not the key's URL: the end of the origin's
    /// redirects or, through a parent, the `Content-Location` it gives for them.
    private func baseURL(of response: OriginResponse) -> String? {
        let base =
            parent == nil
            ? (response.redirectCount > 0 ? response.effectiveURL : nil) : response.header("content-location")
        guard let base, base.utf8.count <= 8192, let scheme = base.split(separator: ":", maxSplits: 1).first,
            ["http", "https"].contains(scheme.lowercased())
        else { return nil }
        return base
    }

    /// The first line of a short error body (at most 512 bytes read), for a message.
    private static func firstLine(of body: OriginBody) async -> String {
        var bytes: [UInt8] = []
        do {
            for try await chunk in body {
                bytes += chunk.prefix(512 - bytes.count)
                if bytes.count >= 512 { break }
            }
        } catch {}
        let text = String(decoding: bytes, as: UTF8.self)
        return String(text.split(separator: "\n", omittingEmptySubsequences: true).first ?? "no reason given")
    }

}
