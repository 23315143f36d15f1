import Glibc

/// An open file descriptor, closed when the last reference goes away.
///
/// Readers of an entry hold one: an entry evicted or replaced while it is being read keeps its
/// inode alive until the reader finishes, so eviction never cuts a body short.
final class OpenFile: Sendable {
    /// The descriptor; valid for as long as this object lives.
    let descriptor: CInt
    /// The layer that opened it, used to read and to close.
    let operations: any FileOperations

    init(descriptor: CInt, operations: any FileOperations) {
        self.descriptor = descriptor
        self.operations = operations
    }

    deinit {
        operations.close(descriptor)
    }

    /// Reads up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(count: Int, at offset: Int64) throws(SystemError) -> [UInt8] {
        var filled = 0
        let bytes = try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized throws(SystemError) in
            defer { initialized = filled }
            let raw = UnsafeMutableRawBufferPointer(buffer)
            while filled < count {
                let got = try operations.read(
                    descriptor, into: UnsafeMutableRawBufferPointer(rebasing: raw[filled...]),
                    at: offset + Int64(filled))
                if got == 0 { break }
                filled += got
            }
        }
        return bytes
    }
}
