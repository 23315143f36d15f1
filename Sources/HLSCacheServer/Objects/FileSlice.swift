import ByteRanges
import Glibc
import HTTPTypes
import NIOCore
import SegmentCache

/// A byte range of a file (a published entry file, or a rendered playlist kept on disk) and a descriptor valid
/// while the slice lives: sent with `sendfile` by the connection's front.
///
/// An entry file's slice borrows the cache's open descriptor and holds what keeps it open; any other slice owns a
/// `dup`, closed when the slice goes. (The borrowed descriptor spares each hit a `dup` and a `close`.)
final class FileSlice: Sendable {
    /// The descriptor; valid while the slice lives. Never close it.
    let descriptor: CInt
    /// The file offset of the first byte.
    let offset: Int64
    /// The number of bytes.
    let length: Int64
    /// The object the bytes are of, for the error that aborts an answer when the file is short.
    let url: String
    /// What keeps a borrowed ``descriptor`` open; `nil` when the slice owns it (a `dup`, closed at `deinit`).
    private let keeper: (any AnyObject & Sendable)?

    /// Duplicates `descriptor`, so the slice outlives whatever holds the original.
    /// - Returns: `nil` when `dup` fails (out of descriptors).
    init?(duplicating descriptor: CInt, offset: Int64, length: Int64, url: String) {
        let own = dup(descriptor)
        guard own >= 0 else { return nil }
        self.descriptor = own
        self.keeper = nil
        self.offset = offset
        self.length = length
        self.url = url
    }

    /// A slice of a cache response's entry file, all of it or `window` of it, borrowing the cache's descriptor.
    init(region: EntryFileRegion, window: ByteRange?, url: String) {
        self.descriptor = region.descriptor
        self.keeper = region.keeper
        self.offset = region.offset + (window?.offset ?? 0)
        self.length = window?.length ?? region.length
        self.url = url
    }

    deinit {
        if keeper == nil { close(descriptor) }
    }

    /// Whether the file still holds every byte of the slice (one `fstat`): an entry truncated in place (by hand, or
    /// a failing disk) is not, and `sendfile` of it would find nothing to send for ever.
    var isIntact: Bool {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return false }
        let (end, overflow) = offset.addingReportingOverflow(length)
        return !overflow && Int64(info.st_size) >= end
    }

    /// Reads the whole slice into one buffer (for the in-memory tier).
    /// - Throws: ``TruncatedBodyError`` when the file is shorter than it should be.
    func readAll() throws(TruncatedBodyError) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: Int(length))
        var position: Int64 = 0
        while position < length {
            let want = Int(length - position)
            let read = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { pointer in
                max(0, pread(descriptor, pointer.baseAddress, want, off_t(offset + position)))
            }
            guard read > 0 else { throw TruncatedBodyError(url: url, expected: length, sent: position) }
            position += Int64(read)
        }
        return buffer
    }
}

/// A cache entry's file is shorter than its header says: it was removed, and the request is answered 503 (a retry
/// fetches the object anew).
struct DamagedEntryError: Error, CustomStringConvertible {
    /// The object.
    let url: String

    var description: String { "the cached copy of \(url) is shorter than its header says: removed, try again" }
}

/// An answer's body ended before its `Content-Length`: the origin or the file gave fewer bytes than announced. The
/// answer is cut short (the connection closes without a clean end), so the player sees it as incomplete.
struct TruncatedBodyError: Error, CustomStringConvertible {
    /// The object whose body was short.
    let url: String
    /// The bytes announced.
    let expected: Int64
    /// The bytes there were.
    let sent: Int64

    var description: String { "body of \(url) ended after \(sent) of \(expected) bytes" }
}
