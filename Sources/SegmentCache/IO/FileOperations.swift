import Glibc

/// The file system calls the cache makes on entry and temporary files.
///
/// ``PosixFileOperations`` makes them for real; tests wrap it to inject `ENOSPC`, `EIO` or
/// `EROFS` at a chosen point. Descriptors are plain `CInt`s owned by ``OpenFile``.
/// The directory scan at open reads directories directly and does not go through this seam.
package protocol FileOperations: Sendable {
    /// Opens `path` with `open(2)` flags; `O_CLOEXEC` is added.
    func open(_ path: String, flags: CInt, mode: mode_t) throws(SystemError) -> CInt
    /// Closes a descriptor, ignoring errors (the cache never writes through a descriptor it closes unsynced).
    func close(_ descriptor: CInt)
    /// Writes at `offset`; may write fewer bytes than asked, like `pwrite(2)`.
    func write(_ descriptor: CInt, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int
    /// Reads at `offset`; returns 0 at the end of the file, like `pread(2)`.
    func read(
        _ descriptor: CInt, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) throws(SystemError) -> Int
    /// The size of an open file, from `fstat(2)`.
    func size(of descriptor: CInt) throws(SystemError) -> Int64
    /// Makes the file's data durable, with `fdatasync(2)`.
    func synchronize(_ descriptor: CInt) throws(SystemError)
    /// Renames atomically, replacing `destination` if it exists.
    func rename(_ source: String, to destination: String) throws(SystemError)
    /// Removes a file.
    func unlink(_ path: String) throws(SystemError)
    /// Creates a directory; succeeds if it exists already.
    func makeDirectory(_ path: String) throws(SystemError)
    /// Sets a file's modification time, which the cache uses as its last-access time.
    func setModificationTime(_ path: String, milliseconds: Int64) throws(SystemError)
    /// The space of the file system holding `path`, from `statvfs(3)`; `nil` when it cannot be read.
    func space(at path: String) -> FileSystemSpace?
}

/// What a file system holds and has left, for an unprivileged writer.
package struct FileSystemSpace: Sendable, Equatable {
    /// Bytes a process may still write (`f_bavail`).
    package var available: Int64
    /// The file system's size (`f_blocks`).
    package var total: Int64

    /// Creates a reading.
    package init(available: Int64, total: Int64) {
        self.available = available
        self.total = total
    }
}

extension FileOperations {
    /// Writes all of `bytes` at `offset`, looping over short writes.
    /// - Returns: the number of bytes written, which is `bytes.count` unless it throws.
    /// - Throws: ``PartialWriteError`` carrying how many bytes were written before the failure.
    func writeAll(_ descriptor: CInt, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(PartialWriteError) {
        var done = 0
        while done < bytes.count {
            do throws(SystemError) {
                let written = try write(
                    descriptor, UnsafeRawBufferPointer(rebasing: bytes[done...]), at: offset + Int64(done))
                guard written > 0 else {
                    throw SystemError(code: EIO, operation: "write", path: nil)
                }
                done += written
            } catch {
                throw PartialWriteError(written: done, underlying: error)
            }
        }
    }

    /// Writes all of `bytes` at `offset`.
    /// - Throws: ``PartialWriteError`` carrying how many bytes were written before the failure.
    func writeAll(
        _ descriptor: CInt, _ bytes: some RandomAccessCollection<UInt8>, at offset: Int64
    ) throws(PartialWriteError) {
        var failure: PartialWriteError?
        let contiguous: Void? = bytes.withContiguousStorageIfAvailable { buffer in
            do throws(PartialWriteError) {
                try writeAll(descriptor, UnsafeRawBufferPointer(buffer), at: offset)
            } catch {
                failure = error
            }
        }
        if contiguous == nil { try writeAll(descriptor, Array(bytes), at: offset) }
        if let failure { throw failure }
    }

}

/// A write that failed after part of its bytes reached the file.
package struct PartialWriteError: Error, Sendable {
    /// How many bytes were written before the failure.
    package let written: Int
    /// The failing call.
    package let underlying: SystemError
}

extension FileOperations {
    /// How many names an open file has: 0 once it was unlinked, or renamed over by another file.
    /// - Throws: ``SystemError`` when `fstat` fails.
    /// How many names the file has, and its size: one `fstat`.
    package func linksAndSize(of descriptor: CInt) throws(SystemError) -> (links: Int, size: Int64) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .current("fstat", path: nil) }
        return (Int(info.st_nlink), Int64(info.st_size))
    }

    package func linkCount(of descriptor: CInt) throws(SystemError) -> Int {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .current("fstat", path: nil) }
        return Int(info.st_nlink)
    }
}
