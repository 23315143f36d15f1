import ByteRanges
import Foundation
import Synchronization

/// A published entry, opened: its file, kept open for as long as a response reads it, and its header.
struct StoredEntry: Sendable {
    let digest: EntryDigest
    let file: OpenFile
    let header: EntryHeader
    /// Where the body starts.
    let headerLength: Int64
    /// The file's size: `headerLength + header.bodyLength`.
    let fileSize: Int64
    /// For an entry held open for hits: when its file was last found still linked, with its expiry read back
    /// (monotonic milliseconds, `CLOCK_MONOTONIC_COARSE`); 0: never.
    var verifiedAt: Int64 = 0
    /// For an entry held open for hits: revoked when the cache lets go of it, or holds another file or expiry for
    /// its key (``SegmentCache/HitLease``).
    var heldToken: HeldToken?

    var metadata: EntryMetadata { header.metadata }

    /// The same entry with another expiry (its header's, rewritten in place since it was read).
    func withExpiry(_ expiry: Date?) -> StoredEntry {
        var header = header
        header.metadata.expiry = expiry
        return StoredEntry(digest: digest, file: file, header: header, headerLength: headerLength, fileSize: fileSize)
    }

    /// A hit response for `key`: the whole body, or `window` of it when `key` is a range inside this entry.
    func response(for key: CacheKey, window: ByteRange?, chunkSize: Int) -> CacheResponse {
        var metadata = header.metadata
        metadata.key = key
        metadata.contentLength = window?.length ?? header.bodyLength
        if window != nil, key.range != nil {
            // A range served from a larger entry: the whole object's length, when that entry knows it.
            metadata.completeLength =
                header.metadata.key.range == nil ? header.bodyLength : header.metadata.completeLength
        }
        return CacheResponse(
            disposition: .hit,
            metadata: metadata,
            isStored: true,
            source: .entry(file, bodyOffset: headerLength),
            start: window?.offset ?? 0,
            chunkSize: chunkSize
        )
    }
}

/// Whether what the cache holds open for a key is still what it held when a ``SegmentCache/HitLease`` was given:
/// revoked (once, for good) when the held entry is let go or replaced. Read without the cache's lock.
final class HeldToken: Sendable {
    private let revoked = Atomic<Bool>(false)

    /// Whether the held entry was let go or replaced.
    var isRevoked: Bool { revoked.load(ordering: .acquiring) }

    /// Marks the held entry let go or replaced; under the cache's lock.
    func revoke() {
        revoked.store(true, ordering: .releasing)
    }
}
