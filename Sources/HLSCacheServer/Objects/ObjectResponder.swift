import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import OriginCache
import SegmentCache

/// Serves segments, init sections, keys and every other non-playlist object from a cache response: whole or
/// one byte range, HEAD, validators, `X-Cache`.
struct ObjectResponder {
    let components: ServerComponents

    func respond(
        _ original: Exchange, response: CacheResponse, requested: RequestedRange?, result: CacheResult
    ) -> Response {
        var exchange = original
        let metadata = response.metadata
        exchange.kind = RequestKind(metadata.objectKind)
        exchange.stream = Self.startReadAhead(after: metadata.key, components: components)
        switch ObjectHead.make(metadata: response.metadata, requested: requested, result: result) {
        case .unsatisfiable(let headers):
            return exchange.finish(
                .rangeNotSatisfiable, body: [], contentType: "text/plain", result: result, headers: headers)
        case .send(let head):
            return send(
                exchange, head.status, headers: head.headers, response: response, window: head.window,
                length: head.length, result: result)
        }
    }

    /// Reads ahead the segments that follow `key` in its VOD playlist.
    /// - Returns: the playlist `key` belongs to, for the status page.
    static func startReadAhead(after key: CacheKey, components: ServerComponents) -> String? {
        guard let position = components.segmentIndex.lookup(key, following: components.configuration.prefetchCount)
        else { return nil }
        components.readAhead?.enqueue(position.next)
        return position.playlist
    }

    /// The whole body of a hit from the in-memory tier, read into it first when it is small enough.
    static func hotBuffer(_ response: CacheResponse, components: ServerComponents) -> ByteBuffer? {
        let hot = components.hotObjects
        let metadata = response.metadata
        if let buffer = hot.buffer(for: metadata) { return buffer }
        guard let length = metadata.contentLength, hot.admits(length),
            let slice = response.withFileRegion({ FileSlice(region: $0, window: nil) }) ?? nil,
            let buffer = try? slice.readAll(), buffer.readableBytes == Int(length)
        else { return nil }
        hot.keep(buffer, for: metadata)
        return buffer
    }

    private func send(
        _ exchange: Exchange, _ status: HTTPResponse.Status, headers: HTTPFields, response: CacheResponse,
        window: CacheByteRange?, length: Int64?, result: CacheResult
    ) -> Response {
        // A small hot object: one shared buffer, no read.
        if response.disposition == .hit, let buffer = Self.hotBuffer(response, components: components) {
            let body = window.map { buffer.getSlice(at: buffer.readerIndex + Int($0.offset), length: Int($0.length)) }
            if let body = body ?? buffer {
                return exchange.stream(status, headers: headers, contentLength: length, result: result) { writer in
                    try await writer.write(body)
                    return Int64(body.readableBytes)
                }
            }
        }
        // A hit: read the entry file directly into NIO buffers (no per-chunk array).
        if response.disposition == .hit,
            let file = response.withFileRegion({ region in FileSlice(region: region, window: window) }) ?? nil
        {
            return exchange.stream(status, headers: headers, contentLength: length, result: result) { writer in
                try await file.write(to: &writer)
            }
        }
        let body: CacheBody
        do {
            body = try window.map { try response.body(range: $0) } ?? response.body
        } catch {
            return exchange.fail(.rangeNotSatisfiable, "\(error)")
        }
        return exchange.stream(status, headers: headers, contentLength: length, result: result) { writer in
            var written: Int64 = 0
            for try await chunk in body {
                try await writer.write(ByteBuffer(bytes: chunk))
                written += Int64(chunk.count)
            }
            if let length, written != length {
                throw CacheError.shortBodyKind
            }
            return written
        }
    }
}
