import Foundation

/// The published entry files under a cache directory (`xx/x/<64 hex digits>`), as full paths: not a fill's
/// `tmp/….part`, a lock, the index snapshot or the live history.
public func publishedEntryFiles(in directory: String) -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: directory)
    var files: [String] = []
    while let relative = enumerator?.nextObject() as? String {
        let parts = relative.split(separator: "/")
        if parts.count == 3, parts[2].count == 64 { files.append(directory + "/" + relative) }
    }
    return files
}
