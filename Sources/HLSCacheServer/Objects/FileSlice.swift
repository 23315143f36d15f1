import Glibc
import HTTPTypes
import Hummingbird
import NIOCore
import SegmentCache

/// A byte range of a published entry file, with its own descriptor (a `dup` of the cache's), read with
/// `pread` straight into NIO buffers.
final class FileSlice: Sendable {
    private let descriptor: CInt
    private let offset: Int64
    private let length: Int64
    private static let chunkSize = 256 * 1024

    /// Duplicates the region's descriptor, so the slice outlives the cache response.
    /// - Returns: `nil` when `dup` fails (the caller then reads through the cache body).
    init?(region: CacheFileRegion, window: CacheByteRange?) {
        let descriptor = dup(region.descriptor)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        self.offset = region.offset + (window?.offset ?? 0)
        self.length = window?.length ?? region.length
    }

    deinit { close(descriptor) }

    /// Reads the whole slice into one buffer (for the in-memory tier).
    /// - Throws: when the file is shorter than it should be.
    func readAll() throws -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: Int(length))
        var position: Int64 = 0
        while position < length {
            let want = Int(length - position)
            let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { pointer in
                max(0, pread(descriptor, pointer.baseAddress, want, off_t(offset + position)))
            }
            guard read > 0 else { throw CacheError.shortBodyKind }
            position += Int64(read)
        }
        return buffer
    }

    /// Writes the slice; throws (aborting the response) when the file is shorter than it should be.
    /// - Returns: the bytes written.
    func write(to writer: inout any ResponseBodyWriter) async throws -> Int64 {
        var position: Int64 = 0
        let allocator = ByteBufferAllocator()
        while position < length {
            let want = Int(min(Int64(Self.chunkSize), length - position))
            var buffer = allocator.buffer(capacity: want)
            let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { pointer in
                let count = pread(descriptor, pointer.baseAddress, want, off_t(offset + position))
                return max(0, count)
            }
            guard read > 0 else { throw CacheError.shortBodyKind }
            position += Int64(read)
            try await writer.write(buffer)
        }
        return position
    }
}
