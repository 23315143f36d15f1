import Foundation
import SegmentCache
import Synchronization

/// A fake origin whose bodies are a function of their URL, so any process can check any entry: the cache tests
/// and the `SegmentCacheWorker` processes they start.
public struct PatternOrigin: ObjectSource {
    /// A pause before each 16 KiB chunk.
    public var chunkDelayMicroseconds = 0

    /// An origin pausing `chunkDelayMicroseconds` before each chunk.
    public init(chunkDelayMicroseconds: Int = 0) {
        self.chunkDelayMicroseconds = chunkDelayMicroseconds
    }

    /// The key of object `index`: its URL carries its size.
    public static func key(_ index: Int) -> CacheKey {
        CacheKey(url: "https://origin.test/pattern/\(index)/\(20_000 + (index &* 7_919) % 300_000).ts")
    }

    /// The body of the object at `key` (the whole object: ranges are sliced by the caller); memoized, as
    /// debug builds are slow to make them and the process tests check hundreds.
    public static func body(of key: CacheKey) -> [UInt8] {
        if let body = bodies.withLock({ $0[key.url] }) { return body }
        let parts = key.url.split(separator: "/")
        guard parts.count >= 2, let index = Int(parts[parts.count - 2]),
            let size = Int(parts[parts.count - 1].dropLast(3))
        else { return Array(key.url.utf8) }
        // Byte i is 31 i + 17 index + i / 512, modulo 256. In block k of 512 bytes that is 31 j + (17 index + k) for
        // its byte j (31 × 512 is a multiple of 256): block k is ``shiftedBlocks``' block (17 index + k) mod 256.
        var body: [UInt8] = []
        body.reserveCapacity(size)
        var block = 0
        while body.count < size {
            let shift = (index &* 17 &+ block) & 255
            let start = shift * blockLength
            body.append(contentsOf: shiftedBlocks[start..<(start + min(blockLength, size - body.count))])
            block += 1
        }
        bodies.withLock { $0[key.url] = body }
        return body
    }

    private static let bodies = Mutex<[String: [UInt8]]>([:])

    private static let blockLength = 512

    /// The 256 blocks a body is made of, one after the other: block `s` holds 31 j + s, modulo 256, at its byte j.
    private static let shiftedBlocks: [UInt8] = (0..<(256 * blockLength)).map {
        UInt8(truncatingIfNeeded: ($0 % blockLength) &* 31 &+ $0 / blockLength)
    }

    /// The object at `key`, in 16 KiB chunks.
    public func fetch(_ key: CacheKey) async throws -> SourceResponse {
        let bytes = Self.body(of: key)
        let delay = chunkDelayMicroseconds
        let chunks = AsyncThrowingStream<[UInt8], any Error> { continuation in
            let task = Task {
                for start in stride(from: 0, to: bytes.count, by: 16_384) {
                    if delay > 0 { try? await Task.sleep(for: .microseconds(delay)) }
                    continuation.yield(Array(bytes[start..<min(start + 16_384, bytes.count)]))
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return SourceResponse(contentType: "video/mp2t", contentLength: Int64(bytes.count), body: SourceBody(chunks))
    }
}
