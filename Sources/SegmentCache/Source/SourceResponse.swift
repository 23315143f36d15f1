import Foundation

/// An origin's answer to a fetch: status, metadata, whether it may be stored, and the body as it arrives.
public struct SourceResponse: Sendable {
    /// The HTTP status, passed to requesters as it is.
    public var status: Int
    /// Whether the cache may store this answer. `false` streams it to the requesters of this fill
    /// (status, metadata and body) and stores nothing: use it for non-2xx answers and `no-store`.
    public var cacheable: Bool
    /// The `Content-Type`.
    public var contentType: String?
    /// The length the origin announced; a body of another length fails the fill and is not stored.
    /// `nil` when the origin announced none; then the body's end is trusted.
    public var contentLength: Int64?
    /// The `ETag`.
    public var etag: String?
    /// The `Last-Modified`, as sent.
    public var lastModified: String?
    /// When the entry stops being fresh (from `Cache-Control`/`Expires`), or `nil` for never.
    public var expiry: Date?
    /// For a ranged key, the length of the whole object (from `Content-Range`), when known.
    public var completeLength: Int64?
    /// What the source decided the object is, stored with the entry (``EntryMetadata/kind``).
    public var kind: UInt8
    /// What an upstream cache said of the object when this answer came through one (a parent hlscache's
    /// `X-Cache`), for the fill's readers; not stored.
    public var upstreamCache: String?
    /// The URL the origin answered from when it differs from the key's (after a redirect), stored with the entry
    /// (``EntryMetadata/baseURL``).
    public var baseURL: String?
    /// The body's chunks as they arrive; throws if the transfer fails.
    public var body: SourceBody

    /// Creates a response.
    /// - Parameters:
    ///   - status: the HTTP status.
    ///   - cacheable: whether the cache may store the answer; by default, for 2xx statuses.
    ///   - contentType: the `Content-Type`.
    ///   - contentLength: the announced length.
    ///   - etag: the `ETag`.
    ///   - lastModified: the `Last-Modified`.
    ///   - expiry: when the entry stops being fresh.
    ///   - completeLength: for a ranged key, the whole object's length.
    ///   - kind: what the source decided the object is (0: not said).
    ///   - body: the body.
    public init(
        status: Int = 200,
        cacheable: Bool? = nil,
        contentType: String? = nil,
        contentLength: Int64? = nil,
        etag: String? = nil,
        lastModified: String? = nil,
        expiry: Date? = nil,
        completeLength: Int64? = nil,
        kind: UInt8 = 0,
        body: SourceBody
    ) {
        self.status = status
        self.cacheable = cacheable ?? (200..<300).contains(status)
        self.contentType = contentType
        self.contentLength = contentLength
        self.etag = etag
        self.lastModified = lastModified
        self.expiry = expiry
        self.completeLength = completeLength
        self.kind = kind
        self.body = body
    }
}

/// A response body: an asynchronous sequence of byte chunks that throws when the transfer fails.
///
/// Wraps any `AsyncSequence` of `[UInt8]` so that sources need not name their concrete type.
public struct SourceBody: AsyncSequence, Sendable {
    /// A chunk of bytes.
    public typealias Element = [UInt8]
    /// Transfer errors.
    public typealias Failure = any Error

    private let makeIterator: @Sendable () -> AsyncIterator

    /// Wraps a sequence of chunks.
    /// - Parameter chunks: the chunks, in order; it should throw when the transfer fails rather than end early.
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == [UInt8] {
        makeIterator = {
            var iterator = chunks.makeAsyncIterator()
            return AsyncIterator { try await iterator.next() }
        }
    }

    /// A body that is all there already.
    /// - Parameter chunks: the chunks, in order.
    public init(chunks: [[UInt8]]) {
        makeIterator = {
            var remaining = chunks[...]
            return AsyncIterator { remaining.popFirst() }
        }
    }

    /// Starts reading the body; read it once.
    /// - Returns: an iterator over the chunks.
    public func makeAsyncIterator() -> AsyncIterator { makeIterator() }

    /// Reads a body's chunks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let nextChunk: () async throws -> [UInt8]?

        init(_ nextChunk: @escaping () async throws -> [UInt8]?) {
            self.nextChunk = nextChunk
        }

        /// The next chunk, or `nil` at the end of the body.
        /// - Returns: the chunk.
        /// - Throws: the transfer's error.
        public mutating func next() async throws -> [UInt8]? { try await nextChunk() }
    }
}
