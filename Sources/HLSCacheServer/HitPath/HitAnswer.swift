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
        let requested = request.headerFields[.range].flatMap(RequestedRange.init(header:))
        guard request.method == .get || request.method == .head, let target = request.path,
            let origin = Self.originURL(for: target, configuration: components.configuration),
            components.isAllowed(originURL: origin)
        else { return nil }
        let key = CacheKey(origin: origin, requested: requested)
        var plan: Plan?
        let found = components.cache.publishedResponse(for: key) { metadata in
            guard (200..<300).contains(metadata.status), metadata.contentLength != nil else { return false }
            if metadata.objectKind == .hlsPlaylist {
                plan = components.playlists.rendering(of: key, fetchedAt: metadata.fetchedAt).map(Plan.playlist)
            } else if case .send(let head) = ObjectHead.make(metadata: metadata, requested: requested, result: .hit) {
                plan = .object(head)
            }
            return plan != nil
        }
        guard let response = found, let plan else { return nil }
        let isHead = request.method == .head
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

    /// The origin URL a proxied request target maps to, or `nil` for hlscache's own routes and targets it would
    /// refuse.
    private static func originURL(for target: String, configuration: ServerConfiguration) -> String? {
        let path = target.prefix { $0 != "?" }
        if path == "/healthz" || path == "/metrics" || (path == "/" && configuration.reverseOrigin == nil) {
            return nil
        }
        guard target.utf8.count <= configuration.maxRequestTargetLength,
            let origin = OriginTarget.originURL(for: target, reverseOrigin: configuration.reverseOrigin),
            !OriginTarget.isRefusedForward(target: target, origin: origin)
        else { return nil }
        return origin
    }

    /// The body of a playlist hit: none for HEAD, the shared buffer, or the rendering's file (sent with `sendfile`).
    private static func playlistBody(_ rendered: RenderedBody, isHead: Bool, canSendFile: Bool) -> Body? {
        if isHead { return Body.none }
        switch rendered {
        case .memory(let buffer): return .memory(buffer)
        case .file(let file):
            guard canSendFile else { return nil }
            let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
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

extension ServerComponents {
    /// Whether the address policy lets requests for `originURL` through: checked on hits too, so that a host
    /// taken off the allowed list is not served from the cache either. The answer depends only on the URL's
    /// `scheme://authority`, and is remembered by it.
    func isAllowed(originURL: String) -> Bool {
        guard let schemeEnd = ByteSearch.offset(of: "://", in: originURL) else { return false }
        let origin = ByteSearch.prefix(of: originURL, from: schemeEnd + 3, stoppingAt: "/?#")
        if let known = allowedOrigins.withLock({ $0[origin] }) { return known }
        var allowed = false
        if let host = OriginTarget.host(of: origin + "/"), !host.isEmpty {
            do {
                try addressPolicy.check(host: host)
                allowed = true
            } catch {
                allowed = false
            }
        }
        allowedOrigins.withLock { known in
            if known.count >= 4096 { known.removeAll(keepingCapacity: true) }
            known[origin] = allowed
        }
        return allowed
    }
}
