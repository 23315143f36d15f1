import ByteRanges

/// What a lookup or fill gives a request: metadata at once, and the body to stream.
///
/// For a hit the body is read from the entry file, and ``withFileRegion(_:)`` gives its descriptor and
/// offsets for `sendfile`. For a miss, ``fetch`` returns as soon as the origin has answered and the body
/// streams while it downloads; it throws if the fill fails. The response keeps what it reads from alive:
/// an entry evicted or replaced meanwhile is still read whole.
public struct CacheResponse: Sendable {
    /// How the request was served.
    public enum Disposition: Sendable, Hashable {
        /// From a published entry.
        case hit
        /// The request found nothing and started a fill.
        case miss
        /// The request joined a fill another request had started.
        case joined
    }

    /// How the request was served.
    public internal(set) var disposition: Disposition
    /// Status and metadata. `contentLength` is this response's body length, `nil` while a fill whose origin
    /// announced no length runs.
    public let metadata: EntryMetadata
    /// Whether the body is (being) stored; `false` for a pass-through answer (not cacheable, or too large).
    /// A fill that hits a disk error midway still reports `true` here and is counted as a disk error.
    public let isStored: Bool
    /// For a fill, what an upstream cache said of the object (a parent hlscache's `X-Cache`); `nil` for entries
    /// read from the store and for sources that are no cache.
    public var upstreamCache: String? = nil

    let source: BodySource
    /// The object offset of this response's first byte (non-zero for a range served from a larger object).
    let start: Int64
    let chunkSize: Int

    /// The whole body of this response.
    public var body: CacheBody {
        CacheBody(source: source, start: start, length: metadata.contentLength, chunkSize: chunkSize, key: metadata.key)
    }

    /// A sub-range of this response's body, for an HTTP `Range` request.
    /// - Parameter range: the bytes wanted, relative to this response's body.
    /// - Returns: a body yielding exactly those bytes.
    /// - Throws: ``CacheError`` when the range lies outside a body of known length.
    public func body(range: ByteRange) throws -> CacheBody {
        if let length = metadata.contentLength, range.upperBound > length {
            throw CacheError.rangeOutOfBounds(range, length: length, key: metadata.key)
        }
        return CacheBody(
            source: source, start: start + range.offset, length: range.length, chunkSize: chunkSize, key: metadata.key)
    }

    /// Calls `body` with the entry file's descriptor and where this response's bytes lie in it, for `sendfile`.
    ///
    /// The descriptor stays open for the duration of the call, and after it for as long as the region's `keeper`
    /// is held; it must never be closed: hold the keeper while a send uses it, or `dup` it for something that
    /// closes what it is given.
    /// - Parameter body: what to do with the region.
    /// - Returns: what `body` returns, or `nil` when the response is not a hit (its bytes are still arriving).
    /// - Throws: what `body` throws.
    public func withFileRegion<Result>(_ body: (EntryFileRegion) throws -> Result) rethrows -> Result? {
        guard case .entry(let file, let bodyOffset) = source, let length = metadata.contentLength else { return nil }
        return try withExtendedLifetime(file) {
            try body(
                EntryFileRegion(descriptor: file.descriptor, offset: bodyOffset + start, length: length, keeper: file))
        }
    }
}
