import Dispatch
import Glibc
import Synchronization

/// An entry file found by the directory scan at open: its name, size and modification time.
struct ScannedEntry: Sendable {
    let digest: EntryDigest
    /// The file's size, header included.
    let size: Int64
    /// The file's modification time in ms since 1970, which the cache keeps as the last access.
    let lastAccess: Int64
}

/// Lists the published entries of a cache directory with `readdir` and `fstatat`, reading no file.
///
/// This is what makes opening fast: a few system calls per fan-out directory and one `fstatat`
/// per entry, no header read; the 256 outer directories are scanned on all cores. Headers are
/// read when an entry is looked up.
enum DirectoryScanner {
    /// Every well-named regular file under the two levels of fan-out of `root` (`ab/c/abc…`).
    static func scan(root: String) -> [ScannedEntry] {
        let rootDescriptor = Glibc.open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard rootDescriptor >= 0 else { return [] }
        defer { Glibc.close(rootDescriptor) }
        var outer: [[UInt8]] = []
        forEachName(in: Glibc.openat(rootDescriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), kind: DT_DIR) {
            _, name in
            if name.count == 2 && isHex(name) { outer.append(Array(name)) }
        }
        let results = Mutex<[[ScannedEntry]]>([])
        let outerNames = outer
        DispatchQueue.concurrentPerform(iterations: outerNames.count) { index in
            let found = scan(outer: outerNames[index], in: rootDescriptor)
            results.withLock { $0.append(found) }
        }
        return results.withLock { $0.flatMap { $0 } }
    }

    /// Scans `<root>/<first>/*/*`.
    private static func scan(outer first: [UInt8], in rootDescriptor: CInt) -> [ScannedEntry] {
        var entries: [ScannedEntry] = []
        let firstDescriptor = openDirectory(first, in: rootDescriptor)
        guard firstDescriptor >= 0 else { return entries }
        defer { Glibc.close(firstDescriptor) }
        var inner: [[UInt8]] = []
        forEachName(in: openDirectory([UInt8(ascii: ".")], in: firstDescriptor), kind: DT_DIR) { _, name in
            if name.count == 1 && isHex(name) { inner.append(Array(name)) }
        }
        for second in inner {
            let leafDescriptor = openDirectory(second, in: firstDescriptor)
            guard leafDescriptor >= 0 else { continue }
            forEachName(in: leafDescriptor, kind: DT_REG) { path, name in
                guard name.count == 64, name[0] == first[0], name[1] == first[1], name[2] == second[0],
                    let digest = EntryDigest(fileName: name)
                else { return }
                var info = stat()
                guard fstatat(leafDescriptor, path, &info, AT_SYMLINK_NOFOLLOW) == 0,
                    info.st_mode & S_IFMT == S_IFREG
                else { return }
                let modified = Int64(info.st_mtim.tv_sec) * 1000 + Int64(info.st_mtim.tv_nsec) / 1_000_000
                entries.append(ScannedEntry(digest: digest, size: Int64(info.st_size), lastAccess: modified))
            }
        }
        return entries
    }

    private static func openDirectory(_ name: [UInt8], in parent: CInt) -> CInt {
        (name + [0]).withUnsafeBufferPointer { path in
            path.withMemoryRebound(to: CChar.self) {
                Glibc.openat(parent, $0.baseAddress!, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            }
        }
    }

    /// Calls `body` with each name in the directory open at `descriptor` (as a C string and as bytes,
    /// both valid during the call only); takes over the descriptor and closes it. Skips `.` and `..`
    /// and, when the file system reports types, entries of another type than `kind`.
    private static func forEachName(
        in descriptor: CInt,
        kind: Int,
        _ body: (UnsafePointer<CChar>, UnsafeRawBufferPointer) -> Void
    ) {
        guard descriptor >= 0 else { return }
        guard let directory = fdopendir(descriptor) else {
            Glibc.close(descriptor)
            return
        }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            let type = Int(entry.pointee.d_type)
            guard type == kind || type == Int(DT_UNKNOWN) else { continue }
            withUnsafeMutablePointer(to: &entry.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: 256) { path in
                    let name = UnsafeRawBufferPointer(start: path, count: strlen(path))
                    guard !(name.count <= 2 && name.allSatisfy { $0 == UInt8(ascii: ".") }) else { return }
                    body(path, name)
                }
            }
        }
    }

    private static func isHex(_ name: some Collection<UInt8>) -> Bool {
        name.allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
        }
    }
}
