import ByteRanges
import HTTPTypes
import Logging
import NIOCore
import OriginCache
import SegmentCache

extension Answer {
    /// The answer for an object (segment, init section, key: anything but a playlist) from a cache response: whole
    /// or one byte range, with validators; a range that starts past the end is 416.
    /// - Parameters:
    ///   - response: the cache's response (a hit, a fill, or a stale entry).
    ///   - requested: the request's `Range`, if any.
    ///   - result: how the cache served it.
    ///   - record: the access record; its kind and stream are filled in.
    ///   - components: the memory tier, read-ahead and the segment index.
    static func object(
        _ response: CacheResponse, requested: RequestedRange?, result: CacheResult, record: AccessRecord,
        components: ServerComponents
    ) -> Answer {
        var record = record
        record.kind = RequestKind(response.metadata.objectKind)
        record.stream = startReadAhead(after: response.metadata.key, components: components)
        switch ObjectHead.make(metadata: response.metadata, requested: requested, result: result, cmsd: components.cmsd)
        {
        case .unsatisfiable(let headers):
            return unsatisfiable(headers, result: result, record: record)
        case .send(let head):
            var body = Body.none
            do {
                if record.method != "HEAD" {
                    body = try objectBody(response, window: head.window, atOnce: false, components: components) ?? .none
                }
            } catch let damaged as DamagedEntryError {
                components.logger.warning(
                    "damaged cache entry removed", metadata: ["url": "\(SecretRedaction.redact(damaged.url))"])
                components.cache.invalidate(response.metadata.key)
                return Answer(failure: .serviceUnavailable, reason: damaged.description, record: record)
            } catch {
                return Answer(failure: .rangeNotSatisfiable, reason: "\(error)", record: record)
            }
            return Answer(
                head.status, headers: head.headers, body: body, length: head.length, result: result, record: record)
        }
    }

    /// 416 for a range that starts past the end of the object (`headers` from ``ObjectHead/make(metadata:requested:result:)``).
    private static func unsatisfiable(_ headers: HTTPFields, result: CacheResult, record: AccessRecord) -> Answer {
        var headers = headers
        headers[.contentType] = "text/plain"
        return Answer(.rangeNotSatisfiable, headers: headers, body: .none, length: 0, result: result, record: record)
    }

    /// The answer for a fresh hit that can be sent at once (a memory buffer or an entry file, or a 416 with no
    /// body), planned by the event-loop hit path with the outcome it decided before counting the hit.
    /// - Returns: `nil` when the body cannot be sent at once after all (the responder answers instead).
    static func objectHit(
        _ response: CacheResponse, outcome: ObjectHead.Outcome, record: AccessRecord, components: ServerComponents
    ) -> Answer? {
        var record = record
        record.kind = RequestKind(response.metadata.objectKind)
        let head: ObjectHead
        switch outcome {
        case .unsatisfiable(let headers):
            record.stream = startReadAhead(after: response.metadata.key, components: components)
            return unsatisfiable(headers, result: .hit, record: record)
        case .send(let sent): head = sent
        }
        let body: Body
        if record.method == "HEAD" {
            body = .none
        } else {
            guard let atOnce = try? objectBody(response, window: head.window, atOnce: true, components: components)
            else { return nil }
            body = atOnce
        }
        record.stream = startReadAhead(after: response.metadata.key, components: components)
        return Answer(head.status, headers: head.headers, body: body, length: head.length, result: .hit, record: record)
    }

    /// The body of an object answer: a hit from the memory tier (read into it first when small enough), a hit's
    /// entry file, or the cache's body stream (a fill).
    /// - Parameter atOnce: only a body that is there to send (memory or file); `nil` otherwise.
    /// - Throws: when `window` lies outside the body.
    private static func objectBody(
        _ response: CacheResponse, window: ByteRange?, atOnce: Bool, components: ServerComponents
    ) throws -> Body? {
        let url = response.metadata.key.url
        if response.disposition == .hit {
            if let buffer = hotBuffer(response, components: components) {
                guard let window else { return .memory(buffer) }
                if let slice = buffer.getSlice(at: buffer.readerIndex + Int(window.offset), length: Int(window.length))
                {
                    return .memory(slice)
                }
            }
            if let slice = response.withFileRegion({ FileSlice(region: $0, window: window, url: url) }) {
                guard slice.isIntact else { throw DamagedEntryError(url: url) }
                return .file(slice)
            }
        }
        guard !atOnce else { return nil }
        return .stream(try window.map { try response.body(range: $0) } ?? response.body)
    }

    /// The whole body of a hit from the in-memory tier, read into it first when it is small enough.
    private static func hotBuffer(_ response: CacheResponse, components: ServerComponents) -> ByteBuffer? {
        let hot = components.memory.hotObjects
        let metadata = response.metadata
        if let buffer = hot.buffer(for: metadata) { return buffer }
        guard let length = metadata.contentLength, hot.admits(length),
            let slice = response.withFileRegion({ FileSlice(region: $0, window: nil, url: metadata.key.url) }),
            let buffer = try? slice.readAll(), buffer.readableBytes == Int(length)
        else { return nil }
        hot.keep(buffer, for: metadata)
        return buffer
    }

    /// Reads ahead the segments that follow `key` in its VOD playlist.
    /// - Returns: the playlist `key` belongs to, for the status page.
    private static func startReadAhead(after key: CacheKey, components: ServerComponents) -> String? {
        guard let position = components.segmentIndex.lookup(key, following: components.configuration.readAheadCount)
        else { return nil }
        components.readAhead?.enqueue(position.next)
        return position.playlist
    }
}
