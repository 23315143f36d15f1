import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import OriginCache
import RequestHeads
import SegmentCache

extension Answer {
    /// How the hit path resolves `request`: once per request, for its hit (``init(hitFor:remembered:components:)``)
    /// and, when it is not one, for the fill it starts (``fillToStart(for:resolved:)``); remembered on the event
    /// loop's thread for the next request of the same target (``ResolutionMemo``), with the last fresh hit answered
    /// on a lease (``KeptHit``).
    static func remembered(_ request: ExchangeRequest, components: ServerComponents) -> RememberedTarget {
        ResolutionMemo.remembered(request, components: components)
    }

    /// The answer to `request` (whose target is `remembered`) when it is a fresh hit the event loop can send at
    /// once, else `nil`: an object (whole or one range, GET or HEAD) whose entry is published and fresh, a playlist
    /// whose rewritten copy is kept, or a CORS preflight. A whole hit this thread answered on a lease (a playlist's
    /// rendering, an object's body: ``KeptHit``) is answered again, with no lookup, while the cache renews the lease.
    ///
    /// Everything else (misses, fills in flight, stale or expired entries, errors, hlscache's own routes) is planned
    /// (``ConnectionFront``), with the same ``Answer`` builders.
    /// - Parameters:
    ///   - request: what the request head asks for.
    ///   - remembered: ``remembered(_:components:)``.
    ///   - components: the server's cache, memory tiers and configuration.
    init?(hitFor request: ExchangeRequest, remembered: RememberedTarget, components: ServerComponents) {
        // Only an origin object's target keeps a hit (``KeptHit``); looked at first, so that the hit answered again
        // and again does not copy the resolution it does not need.
        if let kept = remembered.keptHit {
            if components.cache.renewedHit(kept.lease) {
                components.metrics.keptHit()
                self = kept.answer(record: Self.record(of: request, originURL: kept.url, components: components))
                return
            }
            remembered.keep(nil)
        }
        switch remembered.resolution {
        case .own(.preflight):
            self.init(
                preflightAsking: request.accessControlRequestHeaders,
                record: Self.record(of: request, originURL: nil, components: components))
        case .origin(let resolved):
            self.init(
                hitFor: request, resolved: resolved, components: components, canSendFile: true, keeping: remembered)
        default:
            return nil
        }
    }

    /// The answer to `request`, resolved to the origin object `resolved`, when it is a fresh hit the event loop can
    /// send at once, else `nil`; see ``init(hitFor:remembered:components:)``. A parked request comes here with the
    /// resolution it got when it arrived, and with its `batch` of wake-ups: a playlist found there is answered
    /// without a lookup of its own; one looked up is added to it.
    /// - Parameters:
    ///   - canSendFile: whether a body may be a file (`sendfile`); without it only memory bodies qualify.
    ///   - arrivedAt: when the request arrived, when that was before now (a request that waited for a fill).
    init?(
        hitFor request: ExchangeRequest, resolved: RequestResolution.ProxiedObject, components: ServerComponents,
        canSendFile: Bool, arrivedAt: ContinuousClock.Instant? = nil, batch: WakeBatch? = nil,
        keeping remembered: RememberedTarget? = nil
    ) {
        guard !resolved.isReadAhead else { return nil }
        let key = resolved.key
        let isHead = request.method == .head
        // What decides whether the event loop answers is decided here, before the hit is counted, so that a hit
        // handed on to the plan is not counted twice.
        enum Plan {
            case playlist(RenderedPlaylist, EntryMetadata, SegmentCache.HitLease?)
            case object(ObjectHead.Outcome, CacheResponse, SegmentCache.HitLease?)
        }
        let plan: Plan
        if !resolved.asStored, resolved.view == nil, let shared = batch?.playlistHits[key] {
            components.cache.countHit()
            plan = .playlist(shared.rendered, shared.metadata, nil)
        } else {
            var playlist: (metadata: EntryMetadata, rendered: RenderedPlaylist)?
            var object: ObjectHead.Outcome?
            var lease: SegmentCache.HitLease?
            // A request that waited for a fill takes the version fetched since it arrived, however short its freshness.
            let fetchedSince = arrivedAt.map { Date().addingTimeInterval(-(ContinuousClock.now - $0).seconds) }
            let response = components.cache.publishedResponse(for: key, lease: &lease, fetchedSince: fetchedSince) {
                metadata in
                guard (200..<300).contains(metadata.status), metadata.contentLength != nil else { return false }
                if metadata.objectKind.isManifest, !resolved.asStored {
                    // A view's rendering is planned (``PlaylistRenderer``), not kept with the plain target's hits.
                    guard resolved.view == nil,
                        let rendered = components.memory.playlists.rendering(of: key, fetchedAt: metadata.fetchedAt)
                    else { return false }
                    if case .file = rendered.body, !canSendFile, !isHead { return false }
                    playlist = (metadata, rendered)
                } else {
                    switch ObjectHead.make(
                        metadata: metadata, requested: resolved.requested, result: .hit, cmsd: components.cmsd)
                    {
                    // A range starting past the end: a 416 with no body, answered here like any hit.
                    case .unsatisfiable(let headers): object = .unsatisfiable(headers)
                    case .send(let head) where canSendFile || isHead: object = .send(head)
                    case .send: break
                    }
                }
                return playlist != nil || object != nil
            }
            guard let response else { return nil }
            if let playlist {
                batch?.playlistHits[key] = playlist
                plan = .playlist(playlist.rendered, playlist.metadata, lease)
            } else if let object {
                plan = .object(object, response, lease)
            } else {
                return nil
            }
        }
        let record = Self.record(of: request, originURL: key.url, start: arrivedAt ?? .now, components: components)
        let answer: Answer?
        switch plan {
        case .playlist(let rendered, let metadata, let lease):
            answer = .playlist(rendered, metadata: metadata, result: .hit, record: record, components: components)
            if let remembered, let answer { remembered.keep(KeptHit(answer, lease: lease)) }
        case .object(let outcome, let response, let lease):
            answer = .objectHit(response, outcome: outcome, record: record, components: components)
            if let remembered, let answer, canSendFile { remembered.keep(KeptHit(answer, lease: lease)) }
        }
        guard let answer else { return nil }
        switch answer.body {
        case .none, .memory: break
        case .file: guard canSendFile else { return nil }
        case .stream: return nil  // never planned here; the front streams it
        }
        self = answer
    }
}

extension Answer {
    /// The access record of a request the hit path answers: a new request id, and the CORS grant of its `Origin`.
    static func record(
        of request: ExchangeRequest, originURL: String?, start: ContinuousClock.Instant = .now,
        components: ServerComponents
    ) -> AccessRecord {
        AccessRecord(
            method: request.method.rawValue, path: request.target, id: components.observability.nextRequestID(),
            start: start, originURL: originURL,
            cors: components.configuration.cors.grant(requestOrigin: request.origin),
            cmcd: try? request.cmcd?.data.get(), wireProtocol: request.wireProtocol)
    }
}

extension Answer {
    /// The answer's head as bytes, appended to `buffer`: its own fields, the fields every answer carries, then the
    /// connection's (`Date`, `Server`, and `Connection: close` when `closing`), as NIO's encoder would write them
    /// (`AnswerHeadBytesTests`). An answer with no
    /// `Content-Length` whose status allows a body says `Content-Length: 0` unless `chunked` (the encoder would
    /// announce a chunked body; every hit has its length, or is a 204, and a miss of unknown length is `chunked`).
    /// Fields made once (``MadeFields``) are copied as bytes; the fields every answer carries
    /// (``forEachCarriedField(_:)``), and `Date` and `Server`, from lines made once where only a value varies. A grant
    /// that varies by origin changes an own field (`Vary`): that head is written from ``headers``.
    /// - Parameters:
    ///   - closing: whether the connection closes after this answer.
    ///   - chunked: the body follows in chunks (`Transfer-Encoding: chunked`): an answer of unknown length that the
    ///     front streams as it arrives (``ConnectionFront``), whose end a reader must be able to tell from a cut.
    ///   - http10: the request was HTTP/1.0: the answer says so (an HTTP/1.0 client reads no chunks: its body of
    ///     unknown length ends with the connection), and `Connection: keep-alive` when the connection stays open.
    ///   - delimitedByClose: the body, of unknown length, ends with the connection (to an HTTP/1.0 client): no
    ///     length is given. A HEAD answer of unknown length gives none either.
    ///   - connectionLine: a line of the connection's (its `CMSD-Dynamic`), CRLF included, written before `Date`.
    func writeHead(
        closing: Bool, chunked: Bool = false, http10: Bool = false, delimitedByClose: Bool = false,
        connectionLine: ByteBuffer? = nil, into buffer: inout ByteBuffer
    ) {
        if status == .ok, !http10 {
            buffer.writeStaticString("HTTP/1.1 200 OK\r\n")
        } else {
            buffer.writeStaticString(http10 ? "HTTP/1.0 " : "HTTP/1.1 ")
            buffer.writeString(String(status.code))
            buffer.writeStaticString(" ")
            // A status made from its code alone (an origin's failure passed on) has no phrase of its own.
            buffer.writeString(
                status.reasonPhrase.isEmpty
                    ? HTTPResponseStatus(statusCode: status.code).reasonPhrase : status.reasonPhrase)
            buffer.writeStaticString("\r\n")
        }
        if record.cors.variesByOrigin {
            forEachField { name, value in buffer.writeFieldLine(name, value) }
        } else {
            switch ownFields {
            case .made(let made): buffer.writeImmutableBuffer(made.bytes)
            case .list(let fields): for field in fields { buffer.writeFieldLine(field.name.rawName, field.value) }
            }
            writeCarriedFields(into: &buffer)
        }
        if chunked {
            buffer.writeStaticString("Transfer-Encoding: chunked\r\n")
        } else if length == nil, !delimitedByClose, record.method != "HEAD", status.code >= 200, status.code != 204,
            status.code != 304
        {
            buffer.writeStaticString("Content-Length: 0\r\n")
        }
        if let connectionLine { buffer.writeImmutableBuffer(connectionLine) }
        buffer.writeImmutableBuffer(ServerFields.lines)
        if closing {
            buffer.writeStaticString("Connection: close\r\n\r\n")
        } else {
            // An HTTP/1.0 connection stays open only when the answer says so.
            buffer.writeStaticString(http10 ? "Connection: keep-alive\r\n\r\n" : "\r\n")
        }
    }

    /// The lines of ``forEachCarriedField(_:)``, in its order, from lines made once where only the value of one
    /// field varies (`X-Cache`, the CORS grant of any origin) and with the length's digits written in place: a live
    /// playlist's hits write these on every answer.
    private func writeCarriedFields(into buffer: inout ByteBuffer) {
        buffer.writeImmutableBuffer(CarriedLines.requestID)
        buffer.writeString(record.id)
        buffer.writeStaticString("\r\n")
        if let line = CarriedLines.xCache(result) { buffer.writeImmutableBuffer(line) }
        if let length {
            buffer.writeImmutableBuffer(CarriedLines.contentLength)
            buffer.writeDecimal(length)
            buffer.writeStaticString("\r\n")
        }
        if let allowOrigin = record.cors.allowOrigin {
            if allowOrigin == "*" {
                buffer.writeImmutableBuffer(CarriedLines.anyOrigin)
            } else {
                buffer.writeFieldLine(HTTPField.Name.accessControlAllowOrigin.rawName, allowOrigin)
                buffer.writeFieldLine(HTTPField.Name.accessControlExposeHeaders.rawName, CORSPolicy.exposedHeaders)
            }
        }
    }

    /// `Server`.
    static let serverName = "hlscache"
}

/// The carried fields' lines (``Answer/forEachCarriedField(_:)``) that are the same for many answers, made once from
/// the same names and values.
private enum CarriedLines {
    /// `X-Request-Id: `, before the id.
    static let requestID = ByteBuffer(string: HTTPField.Name.xRequestID.rawName + ": ")
    /// `Content-Length: `, before the digits.
    static let contentLength = ByteBuffer(string: HTTPField.Name.contentLength.rawName + ": ")
    /// Each result's `X-Cache` line (none for an error).
    static func xCache(_ result: CacheResult) -> ByteBuffer? {
        switch result {
        case .hit: hit
        case .miss: miss
        case .stale: stale
        case .bypass: bypass
        case .error: nil
        }
    }
    private static let hit = xCacheLine(.hit)
    private static let miss = xCacheLine(.miss)
    private static let stale = xCacheLine(.stale)
    private static let bypass = xCacheLine(.bypass)

    private static func xCacheLine(_ result: CacheResult) -> ByteBuffer {
        var line = ByteBuffer()
        if let field = result.xCacheField { line.writeFieldLine(field.name.rawName, field.value) }
        return line
    }
    /// The CORS lines of a grant to any origin (`*`).
    static let anyOrigin: ByteBuffer = {
        var lines = ByteBuffer()
        lines.writeFieldLine(HTTPField.Name.accessControlAllowOrigin.rawName, "*")
        lines.writeFieldLine(HTTPField.Name.accessControlExposeHeaders.rawName, CORSPolicy.exposedHeaders)
        return lines
    }()
}

extension ByteBuffer {
    /// Writes `value` in decimal, as `String(value)` spells it, without making the string.
    mutating func writeDecimal(_ value: Int64) {
        guard value >= 0 else {
            writeString(String(value))
            return
        }
        withDecimalDigits(of: UInt64(value)) { writeBytes($0) }
    }
}
