import Glibc
import HTTPTypes
import NIOCore
import OriginCache
import OriginClient
import SegmentCache
import Synchronization

/// The answer to a request that is a fresh cache hit, decided and built on the channel's event loop without a
/// trip through Hummingbird's async responder: an object (whole or one range, GET or HEAD) whose entry is
/// published and fresh, or a playlist whose rewritten copy is in memory.
///
/// Everything else (misses, fills in flight, stale or expired entries, errors, hlscache's own routes) is left to
/// ``ProxyResponder``, which answers the same requests the same way: both build their heads from ``ObjectHead``
/// and ``PlaylistResponder/headers(_:metadata:)``.
struct HitAnswer {
    /// What follows the head.
    enum Body {
        /// No body: a HEAD request.
        case none
        /// A buffer from the memory tier (or a rewritten playlist), shared with other responses.
        case memory(ByteBuffer)
        /// A byte range of an entry file, for `sendfile`. The descriptor is a `dup` the answer owns.
        case file(descriptor: CInt, offset: Int64, length: Int64)
    }

    /// Status and headers, without `Date`, `Server` and `Connection`.
    var head: HTTPResponse
    var body: Body
    /// The body length written in `Content-Length`.
    var length: Int64
    /// For the access log and metrics once the body is sent.
    var record: AccessRecord

    /// What the hit path decided from the entry's metadata, before counting the hit.
    private enum Plan {
        case playlist(RenderedPlaylist)
        case object(ObjectHead)
    }

    /// The answer to `request` when it is a hit the event loop can send at once, else `nil`.
    /// - Parameters:
    ///   - request: the request head.
    ///   - components: the server's cache, memory tiers and configuration.
    ///   - canSendFile: whether a body may be an entry file (`sendfile`); without it only memory bodies qualify.
    init?(request: HTTPRequest, components: ServerComponents, canSendFile: Bool) {
        let start = ContinuousClock.now
        guard let target = request.path,
            case .origin(let resolved) = RequestResolution(
                method: request.method, target: target, range: request.headerFields[.range], components: components)
        else { return nil }
        let requested = resolved.requested
        let key = resolved.key
        let isHead = request.method == .head
        // Everything that decides whether the event loop answers is decided here, before the hit is counted, so
        // that a hit handed on to the responder is not counted twice.
        var plan: Plan?
        let found = components.cache.publishedResponse(for: key) { metadata in
            guard (200..<300).contains(metadata.status), metadata.contentLength != nil else { return false }
            if metadata.objectKind == .hlsPlaylist {
                guard let rendered = components.playlists.rendering(of: key, fetchedAt: metadata.fetchedAt) else {
                    return false
                }
                if case .file = rendered.body, !canSendFile, !isHead { return false }
                plan = .playlist(rendered)
            } else if canSendFile || isHead,
                case .send(let head) = ObjectHead.make(metadata: metadata, requested: requested, result: .hit)
            {
                plan = .object(head)
            }
            return plan != nil
        }
        guard let response = found, let plan else { return nil }
        var record = AccessRecord(
            method: request.method.rawValue, path: target, id: components.nextRequestID(), start: start,
            originURL: key.url)
        var headers: HTTPFields
        let status: HTTPResponse.Status
        switch plan {
        case .playlist(let rendered):
            record.kind = .playlist
            record.stream = key.url
            PlaylistResponder.startReadAhead(after: rendered, components: components)
            status = .ok
            headers = PlaylistResponder.headers(rendered, metadata: response.metadata)
            headers[.contentType] = ObjectKind.hlsPlaylist.contentType
            length = Int64(rendered.body.length)
            guard let playlistBody = Self.playlistBody(rendered.body, isHead: isHead, canSendFile: canSendFile) else {
                return nil
            }
            body = playlistBody
        case .object(let objectHead):
            let metadata = response.metadata
            record.kind = RequestKind(metadata.objectKind)
            record.stream = ObjectResponder.startReadAhead(after: metadata.key, components: components)
            status = objectHead.status
            headers = objectHead.headers
            length = objectHead.length ?? 0
            guard let objectBody = Self.objectBody(response, head: objectHead, isHead: isHead, components: components)
            else { return nil }
            if case .file(let descriptor, _, _) = objectBody, !canSendFile {
                close(descriptor)
                return nil
            }
            body = objectBody
        }
        headers[.xRequestID] = record.id
        headers[.xCache] = CacheResult.hit.header
        headers[.contentLength] = String(length)
        self.head = HTTPResponse(status: status, headerFields: headers)
        self.record = record
    }

    /// The body of a playlist hit: none for HEAD, the shared buffer, or the rendering's file (sent with `sendfile`).
    private static func playlistBody(_ rendered: RenderedBody, isHead: Bool, canSendFile: Bool) -> Body? {
        if isHead { return Body.none }
        switch rendered {
        case .memory(let buffer): return .memory(buffer)
        case .file(let file):
            guard canSendFile else { return nil }
            let descriptor = dup(file.descriptor)
            guard descriptor >= 0 else { return nil }
            return .file(descriptor: descriptor, offset: 0, length: Int64(file.length))
        }
    }

    /// The body of an object hit: none for HEAD, the memory tier's buffer, or the entry file.
    private static func objectBody(
        _ response: CacheResponse, head: ObjectHead, isHead: Bool, components: ServerComponents
    ) -> Body? {
        if isHead { return Body.none }
        if let buffer = ObjectResponder.hotBuffer(response, components: components) {
            guard let window = head.window else { return .memory(buffer) }
            return buffer.getSlice(at: buffer.readerIndex + Int(window.offset), length: Int(window.length))
                .map(Body.memory)
        }
        return response.withFileRegion { region -> Body? in
            let descriptor = dup(region.descriptor)
            guard descriptor >= 0 else { return nil }
            return .file(
                descriptor: descriptor, offset: region.offset + (head.window?.offset ?? 0),
                length: head.window?.length ?? region.length)
        } ?? nil
    }
}

extension HitAnswer.Body {
    /// How the body is sent, for metrics.
    var kind: HitBodyKind {
        switch self {
        case .none: .none
        case .memory: .memory
        case .file: .sendfile
        }
    }
}
