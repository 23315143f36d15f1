import CMalloc
import Glibc

/// How the process's allocator (glibc `malloc`) keeps memory it is given back.
///
/// glibc returns freed memory to the kernel eagerly: a block of more than its mmap threshold is its own mapping,
/// unmapped on `free`, and the top of a heap is trimmed once more than the trim threshold is free there. A server
/// that renders a 1 MB playlist, or relays 64 KiB chunks, allocates the same sizes again at once, so each time
/// the pages come back as page faults on zeroed memory: a large share of the time of rewriting a 10,000-segment
/// playlist (`bench/run.sh rewrite` compares).
public enum HeapRetention {
    /// Blocks up to this size come from the heap, not from a mapping of their own.
    public static let mmapThreshold: CInt = 4 << 20
    /// Free memory at the top of a heap beyond this much goes back to the kernel.
    public static let trimThreshold: CInt = 32 << 20

    /// Keeps freed memory for reuse up to ``trimThreshold`` per heap, and serves blocks up to ``mmapThreshold``
    /// from the heaps: the resident size stays near its peak instead of rising and falling with each request.
    /// Call once, first thing in `main`. `GLIBC_TUNABLES` settings of the two thresholds win over these.
    public static func keepFreedMemory() {
        let tunables = getenv("GLIBC_TUNABLES").map { String(cString: $0) } ?? ""
        if !tunables.contains("mmap_threshold") { _ = mallopt(M_MMAP_THRESHOLD, mmapThreshold) }
        if !tunables.contains("trim_threshold") { _ = mallopt(M_TRIM_THRESHOLD, trimThreshold) }
    }
}
