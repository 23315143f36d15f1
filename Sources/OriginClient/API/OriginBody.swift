/// A response body as an asynchronous sequence of byte chunks, read once.
///
/// Chunks arrive as the origin sends them; the client buffers at most
/// ``OriginClientConfiguration/maxBufferedBytesPerTransfer`` bytes ahead of the reader
/// and pauses the transfer beyond that, so a slow reader slows the origin down instead of
/// filling memory. Cancelling the reading task, or dropping the body unread, aborts the transfer.
///
/// Iteration throws ``OriginError``: ``OriginError/Kind/truncatedBody`` when the origin announced
/// a length and sent less (never a clean end), ``OriginError/Kind/timeout`` (``OriginTimeoutKind/stall``
/// or ``OriginTimeoutKind/total``), ``OriginError/Kind/tooLarge``, ``OriginError/Kind/cancelled``…
public struct OriginBody: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = [UInt8]
    /// Iteration throws ``OriginError``.
    public typealias Failure = any Error

    private let lease: TransferLease

    init(lease: TransferLease) {
        self.lease = lease
    }

    /// Creates the iterator; the body is single-pass, so create one.
    /// - Returns: an iterator over the remaining chunks.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(lease: lease)
    }

    /// Iterates over the body's chunks; it may be handed to another task, but read by one at a time.
    public struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        /// Iteration throws ``OriginError``.
        public typealias Failure = any Error

        private let lease: TransferLease

        init(lease: TransferLease) {
            self.lease = lease
        }

        /// The next chunk.
        /// - Returns: the next chunk of bytes, or `nil` at the end of the body.
        /// - Throws: ``OriginError``.
        public mutating func next() async throws -> [UInt8]? {
            try await lease.transfer.nextChunk()
        }
    }

    /// Reads the whole body into memory; for playlists and other small bodies only.
    /// - Parameter maxBytes: the largest body accepted.
    /// - Returns: the body's bytes.
    /// - Throws: ``OriginError``, of kind ``OriginError/Kind/tooLarge`` past `maxBytes` (the transfer is aborted).
    public func collect(upTo maxBytes: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await chunk in self {
            guard bytes.count + chunk.count <= maxBytes else {
                lease.transfer.cancel()
                throw OriginError.tooLarge(
                    url: lease.transfer.request.url,
                    size: Int64(bytes.count + chunk.count),
                    limit: Int64(maxBytes)
                )
            }
            bytes.append(contentsOf: chunk)
        }
        return bytes
    }
}
