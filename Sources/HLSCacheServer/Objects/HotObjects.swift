import Foundation
import NIOCore
import SegmentCache
import Synchronization

/// The in-memory tier for small hot objects (keys, init sections, small segments): whole entry bodies in NIO
/// buffers, shared by every response that sends them (no copy, no read), bounded by bytes.
///
/// An object is admitted on its first hit (a hit means it was asked for before) when it is at most
/// ``maxObjectBytes``. Each hit is still looked up in the disk cache first, so eviction and replacement there
/// are respected: a buffer is used only while the entry's length and fetch time match. Eviction is CLOCK
/// (second chance): an object used since the hand last passed survives one more round.
final class HotObjects: Sendable {
    private struct Entry {
        var buffer: ByteBuffer
        /// When the entry was fetched: a refetched entry is another version, even with the same length.
        var fetchedAt: Date
        var referenced: Bool
    }

    private struct State {
        var entries: [CacheKey: Entry] = [:]
        var queue: [CacheKey] = []
        var head = 0
        var bytes = 0
    }

    /// The bound on the bytes held.
    let maxBytes: Int
    /// The largest object admitted.
    let maxObjectBytes: Int
    private let state = Mutex(State())

    /// - Parameter maxBytes: the bound; objects up to an eighth of it (at most 4 MiB) are admitted.
    init(maxBytes: Int) {
        self.maxBytes = maxBytes
        self.maxObjectBytes = min(4 << 20, maxBytes / 8)
    }

    /// Whether an object of `length` bytes would be admitted.
    func admits(_ length: Int64) -> Bool {
        length > 0 && length <= Int64(maxObjectBytes)
    }

    /// The body of `metadata`'s entry, if it is held and still the same object.
    func buffer(for metadata: EntryMetadata) -> ByteBuffer? {
        state.withLock { state in
            guard let entry = state.entries[metadata.key],
                entry.buffer.readableBytes == Int(metadata.contentLength ?? -1),
                entry.fetchedAt == metadata.fetchedAt
            else { return nil }
            if !entry.referenced { state.entries[metadata.key]?.referenced = true }
            return entry.buffer
        }
    }

    /// Keeps the body of `metadata`'s entry, evicting what has not been used lately to stay within the bound.
    func keep(_ buffer: ByteBuffer, for metadata: EntryMetadata) {
        let size = buffer.readableBytes
        guard admits(Int64(size)) else { return }
        state.withLock { state in
            if let old = state.entries[metadata.key] {
                state.bytes -= old.buffer.readableBytes
            } else {
                state.queue.append(metadata.key)
            }
            state.entries[metadata.key] = Entry(buffer: buffer, fetchedAt: metadata.fetchedAt, referenced: false)
            state.bytes += size
            while state.bytes > maxBytes, state.head < state.queue.count {
                let key = state.queue[state.head]
                state.head += 1
                guard let entry = state.entries[key] else { continue }
                if entry.referenced {
                    state.entries[key]?.referenced = false
                    state.queue.append(key)
                } else {
                    state.entries[key] = nil
                    state.bytes -= entry.buffer.readableBytes
                }
            }
            if state.head > 1024 && state.head * 2 > state.queue.count {
                state.queue.removeFirst(state.head)
                state.head = 0
            }
        }
    }

    /// Objects and bytes held.
    var usage: (objects: Int, bytes: Int) {
        state.withLock { ($0.entries.count, $0.bytes) }
    }
}
