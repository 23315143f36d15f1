/// Where things live in the cache directory.
///
/// ```
/// <root>/ab/c/<64 hex digits>    published entries, named by EntryDigest
/// <root>/tmp/<instance>.lock     held with flock by each open SegmentCache
/// <root>/tmp/<instance>.<n>.part fills in progress
/// ```
struct CacheLayout: Sendable {
    /// The cache directory, without a trailing slash.
    let root: String

    init(root: String) {
        var root = root
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        self.root = root
    }

    /// The directory of temporary files and instance locks.
    var temporaryDirectory: String { root + "/tmp" }

    /// The path of the entry file named by `digest`.
    func path(of digest: EntryDigest) -> String { root + "/" + digest.relativePath }

    /// The two fan-out directories above `digest`'s file, outer first.
    func directories(of digest: EntryDigest) -> [String] {
        let relative = digest.relativePath
        return [root + "/" + relative.prefix(2), root + "/" + relative.prefix(4)]
    }
}
