import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// One request and its answer: builds the response, and when the answer is complete (or aborted), writes the
/// access-log line and counts the request.
struct Exchange: Sendable {
    let request: Request
    let components: ServerComponents
    let id: String
    let start = ContinuousClock.now
    /// The origin URL the request maps to, once known.
    var originURL: String?
    /// What was asked for, for metrics.
    var kind: RequestKind = .other
    /// The stream (playlist URL) the request belongs to, for the status page.
    var stream: String?

    init(request: Request, components: ServerComponents) {
        self.request = request
        self.components = components
        self.id = components.nextRequestID()
    }

    /// A one-line `text/plain` error naming `reason`; not cacheable by players.
    func fail(_ status: HTTPResponse.Status, _ reason: String) -> Response {
        finish(status, text: reason + "\n", result: .error)
    }

    /// A complete text answer.
    func finish(_ status: HTTPResponse.Status, text: String, result: CacheResult) -> Response {
        finish(status, body: Array(text.utf8), contentType: "text/plain; charset=utf-8", result: result)
    }

    /// A complete answer with a body in memory.
    func finish(
        _ status: HTTPResponse.Status, body: [UInt8], contentType: String, result: CacheResult,
        headers extra: HTTPFields = [:]
    ) -> Response {
        finish(status, body: ByteBuffer(bytes: body), contentType: contentType, result: result, headers: extra)
    }

    /// A complete answer with a body in a (possibly shared) buffer.
    func finish(
        _ status: HTTPResponse.Status, body: ByteBuffer, contentType: String, result: CacheResult,
        headers extra: HTTPFields = [:]
    ) -> Response {
        var headers = extra
        headers[.contentType] = contentType
        if headers[.cacheControl] == nil { headers[.cacheControl] = "no-store" }
        headers[.xRequestID] = id
        if result != .error { headers[.xCache] = result.header }
        let isHead = request.method == .head
        headers[.contentLength] = String(body.readableBytes)
        let response = Response(
            status: status, headers: headers, body: isHead ? ResponseBody() : ResponseBody(byteBuffer: body))
        log(status: status, bytes: isHead ? 0 : Int64(body.readableBytes), result: result, aborted: nil)
        return response
    }

    /// An answer whose body is written as it becomes available; `write` returns the bytes it wrote and throws to
    /// abort the response (the connection is closed without a clean end, so the client sees it as incomplete).
    func stream(
        _ status: HTTPResponse.Status, headers extra: HTTPFields, contentLength: Int64?, result: CacheResult,
        write: @escaping @Sendable (inout any ResponseBodyWriter) async throws -> Int64
    ) -> Response {
        var headers = extra
        headers[.xRequestID] = id
        headers[.xCache] = result.header
        if let contentLength { headers[.contentLength] = String(contentLength) }
        if request.method == .head {
            log(status: status, bytes: 0, result: result, aborted: nil)
            return Response(status: status, headers: headers, body: ResponseBody())
        }
        let body = ResponseBody(contentLength: contentLength.map { Int($0) }) { writer in
            do {
                let written = try await write(&writer)
                try await writer.finish(nil)
                self.log(status: status, bytes: written, result: result, aborted: nil)
            } catch {
                self.log(status: status, bytes: -1, result: result, aborted: error)
                throw error
            }
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// Writes the access-log line and counts the request.
    func log(status: HTTPResponse.Status, bytes: Int64, result: CacheResult, aborted: (any Error)?) {
        let record = AccessRecord(
            method: "\(request.method)", path: request.head.path ?? "", id: id, start: start, kind: kind,
            stream: stream, originURL: originURL)
        record.finish(status: status.code, bytes: bytes, result: result, aborted: aborted, components: components)
    }
}

extension HTTPField.Name {
    /// `X-Cache: HIT|MISS|STALE|BYPASS`.
    static let xCache = HTTPField.Name("X-Cache")!
    /// `X-Request-Id`: the id in the access log.
    static let xRequestID = HTTPField.Name("X-Request-Id")!
}
