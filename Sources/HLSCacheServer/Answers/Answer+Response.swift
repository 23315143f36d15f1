import HTTPTypes
import Hummingbird
import NIOCore
import SegmentCache
import Synchronization

extension Answer {
    /// The answer as Hummingbird's response: the async responder's writer of a plan. The access record is finished
    /// once the last byte is written, or when the answer is cut short.
    func response(components: ServerComponents) -> Response {
        let answer = self
        let length = length.map { Int($0) }
        switch body {
        case .none:
            answer.finished(bytes: 0, aborted: nil, components: components)
            return Response(status: status, headers: headers, body: ResponseBody())
        case .memory(let buffer):
            return response(contentLength: length, components: components) { writer in
                try await writer.write(buffer)
                return Int64(buffer.readableBytes)
            }
        case .file(let slice):
            return response(contentLength: length, components: components) { writer in
                try await slice.write(to: &writer)
            }
        case .stream(let body):
            let expected = self.length
            let url = record.originURL ?? record.path
            return response(contentLength: length, components: components) { writer in
                var written: Int64 = 0
                for try await chunk in body {
                    try await writer.write(ByteBuffer(bytes: chunk))
                    written += Int64(chunk.count)
                }
                if let expected, written != expected {
                    throw TruncatedBodyError(url: url, expected: expected, sent: written)
                }
                return written
            }
        }
    }

    /// A response whose body `write` writes; `write` returns the bytes it wrote and throws to abort the answer (the
    /// connection closes without a clean end, so the client sees it as incomplete).
    private func response(
        contentLength: Int?, components: ServerComponents,
        write: @escaping @Sendable (inout any ResponseBodyWriter) async throws -> Int64
    ) -> Response {
        let answer = self
        let body = ResponseBody(contentLength: contentLength) { writer in
            // Counted as the connection takes them, so that an answer cut short logs the bytes that went out.
            let sent = SentBytes()
            var counting: any ResponseBodyWriter = CountingWriter(base: writer, sent: sent)
            do {
                let written = try await write(&counting)
                try await writer.finish(nil)
                answer.finished(bytes: written, aborted: nil, components: components)
            } catch {
                answer.finished(bytes: sent.count.load(ordering: .relaxed), aborted: error, components: components)
                throw error
            }
        }
        return Response(status: status, headers: headers, body: body)
    }
}

/// The bytes of one answer the connection took.
private final class SentBytes: Sendable {
    let count = Atomic<Int64>(0)
}

/// A body writer that counts the bytes the connection took.
private struct CountingWriter: ResponseBodyWriter {
    var base: any ResponseBodyWriter
    let sent: SentBytes

    mutating func write(_ buffer: ByteBuffer) async throws {
        try await base.write(buffer)
        sent.count.add(Int64(buffer.readableBytes), ordering: .relaxed)
    }

    mutating func write(contentsOf buffers: some Sequence<ByteBuffer>) async throws {
        for buffer in buffers { try await write(buffer) }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await base.finish(trailingHeaders)
    }
}
