import HTTPTypes
import NIOCore
import OriginCache
import SegmentCache

extension Answer {
    /// The answer to `request` when it is a fresh hit the event loop can send at once, else `nil`: an object (whole
    /// or one range, GET or HEAD) whose entry is published and fresh, or a playlist whose rewritten copy is kept.
    ///
    /// Everything else (misses, fills in flight, stale or expired entries, errors, hlscache's own routes) is left to
    /// ``ProxyResponder``, which plans the same requests with the same ``Answer`` builders.
    /// - Parameters:
    ///   - request: the request head.
    ///   - components: the server's cache, memory tiers and configuration.
    ///   - canSendFile: whether a body may be a file (`sendfile`); without it only memory bodies qualify.
    init?(hitFor request: HTTPRequest, components: ServerComponents, canSendFile: Bool) {
        let start = ContinuousClock.now
        guard let target = request.path else { return nil }
        let cors = components.configuration.cors.grant(requestOrigin: request.headerFields[.origin])
        let resolution = RequestResolution(
            method: request.method, target: target, range: request.headerFields[.range],
            via: request.headerFields[.via],
            isReadAhead: request.headerFields[RequestResolution.readAheadHeader] != nil,
            components: components)
        if case .own(.preflight) = resolution {
            self.init(
                preflightAsking: request.headerFields[.accessControlRequestHeaders],
                record: AccessRecord(
                    method: request.method.rawValue, path: target, id: components.observability.nextRequestID(),
                    start: start, cors: cors))
            return
        }
        guard case .origin(let resolved) = resolution, !resolved.isReadAhead else { return nil }
        let key = resolved.key
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
