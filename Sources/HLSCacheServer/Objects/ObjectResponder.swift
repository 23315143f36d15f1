import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SegmentCache

/// Serves segments, init sections, keys and every other non-playlist object from a cache response: whole or
/// one byte range, HEAD, validators, `X-Cache`.
struct ObjectResponder {
    let components: ServerComponents
    /// What players may cache objects for: segments do not change once published.
    static let cacheControl = "public, max-age=86400"

    func respond(
        _ original: Exchange, response: CacheResponse, requested: RequestedRange?, result: CacheResult
    ) -> Response {
        var exchange = original
        let metadata = response.metadata
        exchange.kind = ContentTypes.requestKind(url: metadata.key.url, contentType: metadata.contentType)
        if let position = components.segmentIndex.lookup(
            metadata.key, following: components.configuration.prefetchCount)
        {
            exchange.stream = position.playlist
            components.readAhead?.enqueue(position.next)
        }
        var headers = HTTPFields()
        headers[.contentType] =
            metadata.contentType ?? ContentTypes.byExtension(of: metadata.key.url) ?? "application/octet-stream"
        headers[.cacheControl] = result == .bypass ? "no-store" : Self.cacheControl
        headers[.acceptRanges] = "bytes"
        if let etag = metadata.etag { headers[.eTag] = etag }
        if let lastModified = metadata.lastModified { headers[.lastModified] = lastModified }

        // A request whose key carried the range: the cache answered exactly those bytes.
        if let range = metadata.key.range {
            let total = metadata.completeLength.map(String.init) ?? "*"
            let length = metadata.contentLength ?? range.length
            headers[.contentRange] = "bytes \(range.offset)-\(range.offset + length - 1)/\(total)"
            return send(
                exchange, .partialContent, headers: headers, response: response, window: nil, length: length,
                result: result)
        }
        // An open or suffix range: cut it from the whole object, whose length must be known.
        if let requested, let length = metadata.contentLength {
            guard let (offset, count) = requested.resolved(length: length) else {
                headers[.contentRange] = "bytes */\(length)"
                return exchange.finish(
                    .rangeNotSatisfiable, body: [], contentType: "text/plain", result: result, headers: headers)
            }
            headers[.contentRange] = "bytes \(offset)-\(offset + count - 1)/\(length)"
            let window = CacheByteRange(offset: offset, length: count)
            return send(
                exchange, .partialContent, headers: headers, response: response, window: window, length: count,
                result: result)
        }
        return send(
            exchange, .ok, headers: headers, response: response, window: nil, length: metadata.contentLength,
            result: result)
    }

    /// The whole body of a hit from the in-memory tier, read into it first when it is small enough.
    private func hotBuffer(_ response: CacheResponse) -> ByteBuffer? {
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
        if response.disposition == .hit, let buffer = hotBuffer(response) {
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
