import HTTPTypes
import NIOCore
import NIOHTTP1
import OriginCache
import SegmentCache

extension Answer {
    /// The answer to `request` when it is a fresh hit the event loop can send at once, else `nil`: an object (whole
    /// or one range, GET or HEAD) whose entry is published and fresh, or a playlist whose rewritten copy is kept.
    ///
    /// Everything else (misses, fills in flight, stale or expired entries, errors, hlscache's own routes) is left to
    /// ``ProxyResponder``, which plans the same requests with the same ``Answer`` builders.
    /// - Parameters:
    ///   - request: what the request head asks for.
    ///   - components: the server's cache, memory tiers and configuration.
    ///   - canSendFile: whether a body may be a file (`sendfile`); without it only memory bodies qualify.
    ///   - arrivedAt: when the request arrived, when that was before now (a request that waited for a fill).
    init?(
        hitFor request: HitRequest, components: ServerComponents, canSendFile: Bool,
        arrivedAt: ContinuousClock.Instant? = nil
    ) {
        let resolution = RequestResolution(
            method: request.method, target: request.target, range: request.range, via: request.via,
            isReadAhead: request.isReadAhead, components: components)
        if case .own(.preflight) = resolution {
            self.init(
                preflightAsking: request.accessControlRequestHeaders,
                record: AccessRecord(
                    method: request.method.rawValue, path: request.target,
                    id: components.observability.nextRequestID(), start: arrivedAt ?? ContinuousClock.now,
                    cors: components.configuration.cors.grant(requestOrigin: request.origin)))
            return
        }
        guard case .origin(let resolved) = resolution else { return nil }
        self.init(
            hitFor: request, resolved: resolved, components: components, canSendFile: canSendFile, arrivedAt: arrivedAt)
    }

    /// The answer to `request`, already resolved to the origin object `resolved` (a parked request, resolved when it
    /// arrived), when it is a fresh hit the event loop can send at once, else `nil`; see
    /// ``init(hitFor:components:canSendFile:arrivedAt:)``. A playlist found in `batch` (woken with the others of
    /// its batch) is answered from there, without a lookup; one looked up is added to it.
    init?(
        hitFor request: HitRequest, resolved: RequestResolution.OriginRequest, components: ServerComponents,
        canSendFile: Bool, arrivedAt: ContinuousClock.Instant? = nil, batch: WakeBatch? = nil
    ) {
        guard !resolved.isReadAhead else { return nil }
        let start = arrivedAt ?? ContinuousClock.now
        let target = request.target
        let cors = components.configuration.cors.grant(requestOrigin: request.origin)
        let key = resolved.key
        if !resolved.asStored, let shared = batch?.playlistHits[key] {
            components.cache.countHit()
            let record = AccessRecord(
                method: request.method.rawValue, path: target, id: components.observability.nextRequestID(),
                start: start, originURL: key.url, cors: cors)
            guard
                let answer = Answer.playlist(
                    shared.rendered, metadata: shared.metadata, result: .hit, record: record, components: components)
            else { return nil }
            if case .file = answer.body, !canSendFile { return nil }
            self = answer
            return
        }
        let isHead = request.method == .head
        // What decides whether the event loop answers is decided here, before the hit is counted, so that a hit
        // handed on to the responder is not counted twice.
        enum Plan {
            case playlist(RenderedPlaylist)
            case object(ObjectHead)
        }
        var plan: Plan?
        let found = components.cache.publishedResponse(for: key) { metadata in
            guard (200..<300).contains(metadata.status), metadata.contentLength != nil else { return false }
            if metadata.objectKind.isManifest, !resolved.asStored {
                guard let rendered = components.memory.playlists.rendering(of: key, fetchedAt: metadata.fetchedAt)
                else {
                    return false
                }
                if case .file = rendered.body, !canSendFile, !isHead { return false }
                plan = .playlist(rendered)
            } else if canSendFile || isHead,
                case .send(let head) = ObjectHead.make(metadata: metadata, requested: resolved.requested, result: .hit)
            {
                plan = .object(head)
            }
            return plan != nil
        }
        guard let response = found, let plan else { return nil }
        let record = AccessRecord(
            method: request.method.rawValue, path: target, id: components.observability.nextRequestID(), start: start,
            originURL: key.url, cors: cors)
        let answer: Answer?
        switch plan {
        case .playlist(let rendered):
            batch?.playlistHits[key] = (response.metadata, rendered)
            answer = .playlist(
                rendered, metadata: response.metadata, result: .hit, record: record, components: components)
        case .object(let head):
            answer = .objectHit(response, head: head, record: record, components: components)
        }
        guard let answer else { return nil }
        switch answer.body {
        case .none, .memory: break
        case .file: guard canSendFile else { return nil }
        case .stream: return nil  // never planned here; the responder streams
        }
        self = answer
    }
}

extension Answer {
    /// The answer's head for the HTTP/1 encoder, built straight from the answer (no conversion from HTTP types):
    /// the answer's fields in order, then the connection's own (`Date`, `Server`, and `Connection: close` when
    /// `closing`). The encoder, not a shortcut around it, writes every head, so that it keeps pairing answers
    /// with their requests (it sends no body to a HEAD request).
    /// - Parameter closing: whether the connection closes after this answer.
    func responseHead(closing: Bool) -> HTTPResponseHead {
        var fields: [(String, String)] = []
        fields.reserveCapacity(headers.count + 3)
        for field in headers { fields.append((field.name.rawName, field.value)) }
        fields.append(("Date", HTTPDate.now))
        fields.append(("Server", "hlscache"))
        if closing { fields.append(("Connection", "close")) }
        return HTTPResponseHead(
            version: .http1_1,
            status: HTTPResponseStatus(statusCode: status.code, reasonPhrase: status.reasonPhrase),
            headers: HTTPHeaders(fields))
    }
}
