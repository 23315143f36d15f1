import Foundation
import Glibc
import HLSCacheTesting
import SegmentCache

/// A fresh cache directory under the system's temporary directory, and ways to look inside it.
struct CacheDirectory {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "segmentcache-tests-\(UUID().uuidString)"
    }

    /// Removes the directory and everything in it.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// A configuration for this directory; no sync, the tests do not lose power.
    func configuration(maxBytes: Int64 = 1 << 30) -> SegmentCache.Configuration {
        // Warnings go to the test's output: a fill not kept says why (two full runs once missed an entry).
        SegmentCache.Configuration(directory: path, maxBytes: maxBytes, sync: .never) { record in
            if record.level == .warning { print("segment cache of \(path): \(record)") }
        }
    }

    /// Paths of published entry files.
    var entryFiles: [String] { publishedEntryFiles(in: path) }

    /// The bytes of all published entry files.
    var entryBytes: Int64 {
        entryFiles.reduce(0) { total, file in
            var info = stat()
            return stat(file, &info) == 0 ? total + Int64(info.st_size) : total
        }
    }

    /// Names of fills' temporary files.
    var temporaryFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path + "/tmp")) ?? []).filter { $0.hasSuffix(".part") }
    }
}
