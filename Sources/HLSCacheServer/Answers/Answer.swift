import Glibc
import HTTPTypes
import NIOCore
import SegmentCache

/// One request's answer, planned once: status, finished headers, body and the access record written when the body
/// has been sent. One writer sends every plan: the connection's front (``ConnectionFront``, as bytes: at once, or
/// streamed as a fill brings it), for the requests it reads and those the decoder reads for it.
///
/// The headers every answer carries are added here and nowhere else (``headers``): `X-Request-Id`, `X-Cache`,
/// `Content-Length`, the CORS headers the request was granted, and a default `Cache-Control: no-store`. The writer
/// adds only what belongs to the connection (`Date`, `Server`, `Connection`).
struct Answer: Sendable {
    /// What follows the head.
    enum Body: Sendable {
        /// No body: a HEAD request, or an empty answer.
        case none
        /// One buffer, shared with other answers (the memory tiers) or made for this one.
        case memory(ByteBuffer)
        /// Bytes of a file (an entry file or a rendering on disk), through a descriptor the answer owns: sent with
        /// `sendfile` on the event loop, read with `pread` by the responder.
        case file(FileSlice)
        /// A body still being filled from the origin; a shorter body than `Content-Length` aborts the answer.
        case stream(CacheBody)
    }

    /// 200, 206, 416, an error status…
    var status: HTTPResponse.Status
    /// The builder's fields (type, caching, validators, ranges), with `Cache-Control: no-store` when they set none.
    private(set) var ownFields: OwnFields
    var body: Body
    /// The `Content-Length` sent, when known (the body length, even for HEAD).
    var length: Int64?
    /// How the cache served it.
    var result: CacheResult
    /// For the access log and the request metrics.
    var record: AccessRecord

    /// An answer's own fields: a list, or fields made once with their bytes (``MadeFields``), shared by the many
    /// answers that send the same ones (a live playlist rendering's hits).
    enum OwnFields: Sendable {
        /// Fields made for this answer.
        case list(HTTPFields)
        /// Fields made once, with their bytes.
        case made(MadeFields)

        /// The fields, as a list.
        var fields: HTTPFields {
            switch self {
            case .list(let fields): fields
            case .made(let made): made.fields
            }
        }
    }

    /// Finishes the head of an answer.
    /// - Parameters:
    ///   - status: the status.
    ///   - headers: the answer's own headers (type, caching, validators, ranges).
    ///   - body: the body; replaced with none for a HEAD request (the length stays).
    ///   - length: the body length, when known.
    ///   - result: how the cache served it; an `.error` answer carries no `X-Cache`.
    ///   - record: the access record, whose method and id the answer uses.
    init(
        _ status: HTTPResponse.Status, headers: HTTPFields, body: Body, length: Int64?, result: CacheResult,
        record: AccessRecord
    ) {
        var headers = headers
        if !headers.contains(.cacheControl) { headers.append(HTTPField(name: .cacheControl, value: "no-store")) }
        self.init(status, ownFields: .list(headers), body: body, length: length, result: result, record: record)
    }

    /// Finishes the head of an answer whose own fields are made once (they include their `Cache-Control`).
    init(
        _ status: HTTPResponse.Status, made: MadeFields, body: Body, length: Int64?, result: CacheResult,
        record: AccessRecord
    ) {
        self.init(status, ownFields: .made(made), body: body, length: length, result: result, record: record)
    }

    private init(
        _ status: HTTPResponse.Status, ownFields: OwnFields, body: Body, length: Int64?, result: CacheResult,
        record: AccessRecord
    ) {
        self.status = status
        self.ownFields = ownFields
        self.body = record.method == "HEAD" ? .none : body
        self.length = length
        self.result = result
        self.record = record
    }

    /// The finished headers, except `Date`, `Server` and `Connection`: the answer's own fields, then the fields every
    /// answer carries, added here and nowhere else: `X-Request-Id`, `X-Cache` (not for an error), `Content-Length`
    /// (when known) and the CORS headers the request was granted. ``writeHead(closing:chunked:into:)`` writes the same
    /// fields in the same order.
    var headers: HTTPFields {
        var headers = ownFields.fields
        headers.reserveCapacity(headers.count + 5)
        // Appended, not set: no builder sets these (they are the answer's own), so none is there to replace.
        forEachCarriedField { name, value in headers.append(HTTPField(name: name, value: value)) }
        if record.cors.variesByOrigin { headers[.vary] = headers[.vary].map { $0 + ", Origin" } ?? "Origin" }
        return headers
    }

    /// The fields every answer carries after its own, in order: `X-Request-Id`, `X-Cache` (not for an error),
    /// `Content-Length` (when known), and the CORS headers the request was granted. A grant that varies by origin
    /// also adds `Origin` to the own `Vary` field (``headers`` does).
    func forEachCarriedField(_ body: (_ name: HTTPField.Name, _ value: String) -> Void) {
        body(.xRequestID, record.id)
        if let xCache = result.xCacheField { body(.xCache, xCache.value) }
        if let length { body(.contentLength, String(length)) }
        if let allowOrigin = record.cors.allowOrigin {
            body(.accessControlAllowOrigin, allowOrigin)
            body(.accessControlExposeHeaders, CORSPolicy.exposedHeaders)
        }
    }

    /// Every field of ``headers``, in order (name, value), without making the list unless the CORS grant changes an
    /// own field (`Vary`).
    func forEachField(_ body: (_ name: String, _ value: String) -> Void) {
        guard !record.cors.variesByOrigin else {
            for field in headers { body(field.name.rawName, field.value) }
            return
        }
        for field in ownFields.fields { body(field.name.rawName, field.value) }
        forEachCarriedField { name, value in body(name.rawName, value) }
    }

    /// Replaces the answer's own fields with `fields`.
    mutating func replaceOwnFields(with fields: HTTPFields) {
        ownFields = .list(fields)
    }

    /// Sets one of the answer's own fields (a node's `X-Cache-Parent`, a refusal's `WWW-Authenticate`).
    mutating func setField(_ name: HTTPField.Name, to value: String) {
        var fields = ownFields.fields
        fields[name] = value
        ownFields = .list(fields)
    }

    /// A complete answer from bytes in memory.
    init(
        _ status: HTTPResponse.Status, buffer: ByteBuffer, contentType: String, result: CacheResult,
        record: AccessRecord, headers: HTTPFields = [:]
    ) {
        var headers = headers
        headers[.contentType] = contentType
        self.init(
            status, headers: headers, body: .memory(buffer), length: Int64(buffer.readableBytes), result: result,
            record: record)
    }

    /// A one-line `text/plain` answer naming `reason`; players do not cache it.
    init(failure status: HTTPResponse.Status, reason: String, record: AccessRecord) {
        self.init(
            status, buffer: ByteBuffer(string: reason + "\n"), contentType: "text/plain; charset=utf-8",
            result: .error, record: record)
    }

    /// The answer to a CORS preflight (`OPTIONS`): 204 with the methods and headers a page may use, answered
    /// without an origin request.
    /// - Parameters:
    ///   - requestedHeaders: the request's `Access-Control-Request-Headers`.
    ///   - record: the access record, which carries the CORS grant.
    init(preflightAsking requestedHeaders: String?, record: AccessRecord) {
        self.init(
            .noContent, headers: CORSPolicy.preflightHeaders(requestedHeaders: requestedHeaders), body: .none,
            length: nil, result: .bypass, record: record)
    }

    /// The head to send.
    var head: HTTPResponse { HTTPResponse(status: status, headerFields: headers) }

    /// How the body is sent, for metrics.
    var bodyKind: HitBodyKind {
        switch body {
        case .none: .none
        case .memory: .memory
        case .file, .stream: .sendfile
        }
    }

    /// Writes the access-log line and counts the request.
    /// - Parameters:
    ///   - bytes: the body bytes sent (negative when the answer was cut short).
    ///   - aborted: why the body was cut short, if it was.
    func finished(bytes: Int64, aborted: (any Error)?, components: ServerComponents) {
        record.finish(status: status.code, bytes: bytes, result: result, aborted: aborted, components: components)
    }
}

extension HTTPField.Name {
    /// `X-Cache: HIT|MISS|STALE|BYPASS`.
    static let xCache = HTTPField.Name("X-Cache")!
    /// `X-Cache-Parent: HIT|MISS|STALE|BYPASS`: what a parent hlscache's cache did for an answer filled through it.
    static let xCacheParent = HTTPField.Name("X-Cache-Parent")!
    /// `X-Request-Id`: the id in the access log.
    static let xRequestID = HTTPField.Name("X-Request-Id")!
}
