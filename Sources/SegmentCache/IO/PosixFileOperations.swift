import Glibc

/// The real file system: each method is one system call, retried on `EINTR`.
package struct PosixFileOperations: FileOperations {
    /// `UTIME_OMIT` from `<sys/stat.h>`, a macro Swift does not import: leave this time unchanged.
    private static let omitTime = (1 << 30) - 2

    /// Creates the real file layer.
    package init() {}

    /// `statvfs(3)` of `path`.
    package func space(at path: String) -> FileSystemSpace? {
        var reading = statvfs()
        guard statvfs(path, &reading) == 0 else { return nil }
        guard let block = Int64(exactly: reading.f_frsize), let availableBlocks = Int64(exactly: reading.f_bavail),
            let totalBlocks = Int64(exactly: reading.f_blocks)
        else { return nil }
        let (available, availableOverflow) = availableBlocks.multipliedReportingOverflow(by: block)
        let (total, totalOverflow) = totalBlocks.multipliedReportingOverflow(by: block)
        guard !availableOverflow, !totalOverflow else { return nil }
        return FileSystemSpace(available: available, total: total)
    }

    package func open(_ path: String, flags: CInt, mode: mode_t) throws(SystemError) -> CInt {
        while true {
            let descriptor = Glibc.open(path, flags | O_CLOEXEC, mode)
            if descriptor >= 0 { return descriptor }
            if errno != EINTR { throw .current("open", path: path) }
        }
    }

    package func close(_ descriptor: CInt) {
        _ = Glibc.close(descriptor)
    }

    package func write(_ descriptor: CInt, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int
    {
        while true {
            let written = pwrite(descriptor, bytes.baseAddress, bytes.count, off_t(offset))
            if written >= 0 { return written }
            if errno != EINTR { throw .current("write", path: nil) }
        }
    }

    package func read(
        _ descriptor: CInt, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) throws(SystemError) -> Int {
        while true {
            let got = pread(descriptor, buffer.baseAddress, buffer.count, off_t(offset))
            if got >= 0 { return got }
            if errno != EINTR { throw .current("read", path: nil) }
        }
    }

    package func size(of descriptor: CInt) throws(SystemError) -> Int64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .current("fstat", path: nil) }
        return Int64(info.st_size)
    }

    package func synchronize(_ descriptor: CInt) throws(SystemError) {
        while fdatasync(descriptor) != 0 {
            if errno != EINTR { throw .current("fdatasync", path: nil) }
        }
    }

    package func rename(_ source: String, to destination: String) throws(SystemError) {
        guard Glibc.rename(source, destination) == 0 else { throw .current("rename", path: destination) }
    }

    package func unlink(_ path: String) throws(SystemError) {
        guard Glibc.unlink(path) == 0 else { throw .current("unlink", path: path) }
    }

    package func makeDirectory(_ path: String) throws(SystemError) {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { throw .current("mkdir", path: path) }
    }

    package func setModificationTime(_ path: String, milliseconds: Int64) throws(SystemError) {
        let modified = timespec(tv_sec: time_t(milliseconds / 1000), tv_nsec: Int((milliseconds % 1000) * 1_000_000))
        let times = [timespec(tv_sec: 0, tv_nsec: Self.omitTime), modified]
        guard utimensat(AT_FDCWD, path, times, 0) == 0 else { throw .current("utimensat", path: path) }
    }
}
