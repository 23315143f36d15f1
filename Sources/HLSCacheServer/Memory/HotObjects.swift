import Foundation
import NIOCore
import SegmentCache
import Synchronization

/// The in-memory tier for small hot objects (keys, init sections, small parts and segments): whole entry bodies in
/// NIO buffers, shared by every response that sends them (no open, no read), bounded by bytes.
///
/// An object is admitted on its first hit (a hit means it was asked for before) when it is at most
/// ``maxObjectBytes``: small enough that copying it into the socket costs less than opening its entry file and
/// sending that with `sendfile`, which the kernel does without a copy. Larger hits go from their file
/// (``largestObjectBytes`` says where the two meet). Each hit is still looked up in the disk cache first, so
/// eviction and replacement there are respected: a buffer is used only while the entry's length and fetch time
/// match. Eviction is CLOCK (second chance): an object used since the hand last passed survives one more round.
final class HotObjects: Sendable {
    private struct Entry {
        var buffer: ByteBuffer
        /// When the entry was fetched: a refetched entry is another version, even with the same length.
        var fetchedAt: Date
    }

    /// The bound on the bytes held.
    let maxBytes: Int
    /// The largest object admitted.
    let maxObjectBytes: Int
    private let entries: Mutex<ClockMap<CacheKey, Entry>>

    /// The largest object the tier admits, whatever its budget: below it, answering from memory is at least as fast
    /// as `sendfile` from the entry file; above it, the file is faster and the gap grows with the size
    /// (`bench/PROFILES.md`).
    static let largestObjectBytes = 64 << 10

    /// - Parameter maxBytes: the bound; objects up to an eighth of it (at most ``largestObjectBytes``) are admitted.
    init(maxBytes: Int) {
        self.maxBytes = maxBytes
        self.maxObjectBytes = min(Self.largestObjectBytes, maxBytes / 8)
        self.entries = Mutex(ClockMap(capacity: maxBytes))
    }

    /// Whether an object of `length` bytes would be admitted.
    func admits(_ length: Int64) -> Bool {
        length > 0 && length <= Int64(maxObjectBytes)
    }

    /// The body of `metadata`'s entry, if it is held and still the same object.
    func buffer(for metadata: EntryMetadata) -> ByteBuffer? {
        entries.withLock { entries in
            guard let entry = entries.value(forKey: metadata.key),
                entry.buffer.readableBytes == Int(metadata.contentLength ?? -1),
                entry.fetchedAt == metadata.fetchedAt
            else { return nil }
            return entry.buffer
        }
    }

    /// Keeps the body of `metadata`'s entry, evicting what has not been used lately to stay within the bound.
    func keep(_ buffer: ByteBuffer, for metadata: EntryMetadata) {
        let size = buffer.readableBytes
        guard admits(Int64(size)) else { return }
        entries.withLock { entries in
            _ = entries.insert(Entry(buffer: buffer, fetchedAt: metadata.fetchedAt), forKey: metadata.key, cost: size)
        }
    }

    /// Forgets the objects whose key matches (a purge).
    /// - Returns: how many were held.
    @discardableResult
    func remove(where matches: @Sendable (CacheKey) -> Bool) -> Int {
        entries.withLock { $0.removeAll(where: matches) }
    }

    /// Objects and bytes held.
    var usage: (objects: Int, bytes: Int) {
        entries.withLock { ($0.count, $0.totalCost) }
    }
}
