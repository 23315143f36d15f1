import Glibc

/// A response body: chunks of at most ``SegmentCache/Configuration/readChunkSize`` bytes, read from the entry
/// file or, for a fill in flight, as they arrive from the origin.
///
/// A body can be iterated any number of times, each iteration reading from the start. It throws instead
/// of ending when the fill behind it fails, so a server can abort the response rather than end it cleanly.
public struct CacheBody: AsyncSequence, Sendable {
    /// A chunk of bytes.
    public typealias Element = [UInt8]
    /// The fill's error, a disk error or `CancellationError`.
    public typealias Failure = any Error

    let source: BodySource
    /// The object offset of the first byte.
    let start: Int64
    /// How many bytes, or `nil` for everything up to the end of the fill.
    let length: Int64?
    let chunkSize: Int
    /// The key, for error messages.
    let key: CacheKey

    /// Starts reading the body.
    /// - Returns: an iterator over the chunks.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(body: self, position: start, remaining: length)
    }

    /// Reads a body's chunks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let body: CacheBody
        var position: Int64
        var remaining: Int64?

        /// The next chunk, or `nil` at the end of the body.
        /// - Returns: the chunk.
        /// - Throws: the fill's error, a ``CacheError`` on a disk error or short object, or `CancellationError`.
        public mutating func next() async throws -> [UInt8]? {
            try await next(isolation: nil)
        }

        /// The next chunk, read on the caller's executor: a hit's chunks are read without a thread hop.
        /// - Parameter actor: the caller's isolation.
        /// - Returns: the chunk, or `nil` at the end of the body.
        /// - Throws: the fill's error, a ``CacheError`` on a disk error or short object, or `CancellationError`.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> [UInt8]? {
            if let remaining, remaining <= 0 { return nil }
            let wanted = Int(Swift.min(Int64(body.chunkSize), remaining ?? Int64(body.chunkSize)))
            let chunk: [UInt8]?
            switch body.source {
            case .entry(let file, let bodyOffset):
                do throws(SystemError) {
                    let bytes = try file.read(count: wanted, at: bodyOffset + position)
                    chunk = bytes.isEmpty ? nil : bytes
                } catch {
                    throw CacheError.disk(error)
                }
            case .flight(let flight):
                chunk = try await flight.read(at: position, maxCount: wanted, isolation: actor)
            }
            guard let chunk else {
                if let remaining, remaining > 0 {
                    throw CacheError.shortBody(
                        key: body.key, received: position - body.start, announced: body.length ?? 0)
                }
                return nil
            }
            position += Int64(chunk.count)
            remaining = remaining.map { $0 - Int64(chunk.count) }
            return chunk
        }
    }
}

/// Where a cached body lies in its entry file, so a server can send it with `sendfile`.
public struct EntryFileRegion: Sendable {
    /// An open, read-only descriptor of the entry file; valid while ``keeper`` lives. Never close it.
    public let descriptor: CInt
    /// The file offset of the first body byte of the response.
    public let offset: Int64
    /// The number of bytes.
    public let length: Int64
    /// What keeps ``descriptor`` open: hold it for as long as the descriptor is used past
    /// ``CacheResponse/withFileRegion(_:)`` (a `sendfile` in flight), instead of a `dup` of the descriptor.
    public let keeper: any AnyObject & Sendable
}
