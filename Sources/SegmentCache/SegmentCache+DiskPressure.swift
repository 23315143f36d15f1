import Glibc
import Synchronization

/// A full file system under the cache: the effective bound is the smaller of ``Configuration/maxBytes`` and what
/// the file system can hold, so the cache keeps caching instead of passing every miss through.
///
/// - Before publishing, a fill checks the file system (`statvfs`): when less than ``diskHeadroom(of:)`` is left,
///   least recently used entries go until it is there again.
/// - A write that fails with `ENOSPC` (other writers, several fills at once) evicts entries and is retried once.
/// - One warning when an episode starts and one when it ends, not one per miss; evictions are counted in
///   ``Statistics/diskFullEvictions``.
extension SegmentCache {
    /// The free space to keep on the cache's file system: a twentieth of it, at most 64 MiB.
    static func diskHeadroom(of space: FileSystemSpace) -> Int64 {
        min(64 << 20, space.total / 20)
    }

    /// The bytes to free before `incoming` more are published: what is missing of the headroom, or 0.
    func diskDeficit() -> Int64 {
        guard let space = operations.space(at: layout.root) else { return 0 }
        let deficit = Self.diskHeadroom(of: space) - space.available
        if deficit <= 0 {
            endDiskFullEpisode(space)
            return 0
        }
        startDiskFullEpisode(space)
        return deficit
    }

    /// Evicts least recently used entries (never one being filled, nor `keeping`) until `bytes` are freed or
    /// nothing is left to evict: the answer to an `ENOSPC`.
    /// - Returns: whether anything was evicted.
    func evictForFullDisk(freeing bytes: Int64, keeping: EntryDigest?) -> Bool {
        startDiskFullEpisode(operations.space(at: layout.root))
        var freed: Int64 = 0
        while freed < bytes {
            let victim = withState { state -> (EntryDigest, Int64)? in
                guard let digest = state.nextVictim(toFit: 1, within: 0, keeping: keeping) else { return nil }
                return (digest, state.removalSize(digest))
            }
            guard let (digest, size) = victim else { break }
            unlinkEvicted(digest)
            counters.diskFullEvictions.increment()
            freed += max(size, 1)
        }
        return freed > 0
    }

    private func startDiskFullEpisode(_ space: FileSystemSpace?) {
        guard !counters.diskFull.exchange(true, ordering: .relaxed) else { return }
        let free = space.map { "\($0.available) of \($0.total) bytes free" } ?? "free space unknown"
        log(
            .warning,
            "the cache's file system is full (\(free)): evicting least recently used entries to make room; "
                + "not logged again until it has room",
            key: nil)
    }

    private func endDiskFullEpisode(_ space: FileSystemSpace) {
        guard counters.diskFull.exchange(false, ordering: .relaxed) else { return }
        log(.warning, "the cache's file system has room again (\(space.available) bytes free)", key: nil)
    }

    /// Whether a disk error is a full file system in an episode already reported: counted, not logged again.
    func isReportedDiskFull(_ error: SystemError) -> Bool {
        error.code == ENOSPC && counters.diskFull.load(ordering: .relaxed)
    }
}
