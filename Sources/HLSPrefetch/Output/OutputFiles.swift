#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations of an `--output` folder: a file appears under its final name only when complete
/// (written to `.partial/` and renamed), so a rerun can trust every file it finds.
struct OutputFiles: Sendable {
    /// The output folder.
    let root: String

    /// Where files are written before they are complete.
    var partialFolder: String { root + "/.partial" }

    /// Creates the folder, `media/` and `.partial/`, and removes partial files left by an interrupted run.
    func prepare() throws(OutputFileError) {
        for folder in [root, root + "/" + OutputLayout.mediaFolder, partialFolder] {
            try makeDirectories(folder)
        }
        if let directory = opendir(partialFolder) {
            defer { closedir(directory) }
            while let entry = readdir(directory) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name != "." && name != ".." { unlink(partialFolder + "/" + name) }
            }
        }
    }

    /// Removes `.partial/` when it is empty (another run may still be using it otherwise).
    func removePartialFolder() {
        rmdir(partialFolder)
    }

    /// The size of the complete file at `relativePath`, or `nil` when there is none.
    func size(of relativePath: String) -> Int64? {
        var info = stat()
        guard stat(root + "/" + relativePath, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// A new partial file, open for writing.
    func makePartial(for relativePath: String) throws(OutputFileError) -> PartialFile {
        if let slash = relativePath.lastIndex(of: "/") { try makeDirectories(root + "/" + relativePath[..<slash]) }
        let name = relativePath.replacing("/", with: "_") + ".\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let path = partialFolder + "/" + name
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw OutputFileError(operation: "create", path: path, code: errno) }
        return PartialFile(descriptor: descriptor, path: path, finalPath: root + "/" + relativePath)
    }

    /// Writes `text` to `relativePath` through a partial file and a rename.
    func write(_ text: String, to relativePath: String) throws(OutputFileError) {
        var file = try makePartial(for: relativePath)
        do throws(OutputFileError) {
            try file.write(Array(text.utf8))
            try file.publish()
        } catch {
            file.discard()
            throw error
        }
    }

    private func makeDirectories(_ path: String) throws(OutputFileError) {
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw OutputFileError(operation: "use as a folder", path: path, code: ENOTDIR)
            }
            return
        }
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            try makeDirectories(String(path[..<slash]))
        }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw OutputFileError(operation: "create the folder", path: path, code: errno)
        }
    }
}

/// A file being written; ``publish()`` renames it into place, ``discard()`` removes it.
struct PartialFile: Sendable {
    let descriptor: CInt
    let path: String
    let finalPath: String
    private(set) var written: Int64 = 0

    init(descriptor: CInt, path: String, finalPath: String) {
        self.descriptor = descriptor
        self.path = path
        self.finalPath = finalPath
    }

    /// Appends `bytes`.
    mutating func write(_ bytes: some Collection<UInt8>) throws(OutputFileError) {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let count = array.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw OutputFileError(operation: "write", path: path, code: errno)
            }
            offset += count
        }
        written += Int64(array.count)
    }

    /// Closes the file and renames it to its final name.
    func publish() throws(OutputFileError) {
        guard close(descriptor) == 0 else {
            unlink(path)
            throw OutputFileError(operation: "close", path: path, code: errno)
        }
        guard rename(path, finalPath) == 0 else {
            let code = errno
            unlink(path)
            throw OutputFileError(operation: "rename into place", path: finalPath, code: code)
        }
    }

    /// Closes and removes the file.
    func discard() {
        close(descriptor)
        unlink(path)
    }
}

/// A file operation of the output folder that failed.
struct OutputFileError: Error, Sendable, CustomStringConvertible {
    let operation: String
    let path: String
    let code: CInt

    var description: String {
        "cannot \(operation) \(path): \(String(cString: strerror(code)))"
    }
}
