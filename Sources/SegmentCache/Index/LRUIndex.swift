/// The in-memory index of published entries: size and last access of each, in least-recently-used order.
///
/// A doubly linked list threaded through an array of slots, plus a dictionary from digest to
/// slot, as in groupcache's `lru`: touching, inserting, removing and finding the least recently
/// used entry are all O(1), so neither a hit nor an eviction step holds the cache's lock for long.
/// The index is advisory: lookups always go to the file, so an index that lags behind the
/// directory (another process's entries, say) only delays eviction, never serves wrong bytes.
struct LRUIndex: Sendable {
    private struct Slot: Sendable {
        var digest: EntryDigest
        var size: Int64
        var lastAccess: Int64
        var newer: Int32
        var older: Int32
    }

    private static let none: Int32 = -1
    private var slots: [Slot] = []
    private var freeSlots: [Int32] = []
    private var positions: [EntryDigest: Int32] = [:]
    /// Most recently used.
    private var newest: Int32 = LRUIndex.none
    /// Least recently used.
    private var oldest: Int32 = LRUIndex.none

    /// The bytes of all entries, headers included.
    private(set) var totalBytes: Int64 = 0

    /// The number of entries.
    var count: Int { positions.count }

    init() {}

    /// Builds an index from scanned entries, ordering them by their last access.
    init(scanned: [ScannedEntry]) {
        slots.reserveCapacity(scanned.count)
        positions.reserveCapacity(scanned.count)
        for entry in scanned.sorted(by: { $0.lastAccess < $1.lastAccess }) {
            insert(entry.digest, size: entry.size, lastAccess: entry.lastAccess)
        }
    }

    /// Whether `digest` is in the index.
    func contains(_ digest: EntryDigest) -> Bool { positions[digest] != nil }

    /// The last access of `digest`, if it is in the index.
    func lastAccess(of digest: EntryDigest) -> Int64? {
        positions[digest].map { slots[Int($0)].lastAccess }
    }

    /// Adds or replaces an entry as the most recently used.
    mutating func insert(_ digest: EntryDigest, size: Int64, lastAccess: Int64) {
        if let position = positions[digest] {
            totalBytes += size - slots[Int(position)].size
            slots[Int(position)].size = size
            slots[Int(position)].lastAccess = lastAccess
            moveToNewest(position)
            return
        }
        let slot = Slot(digest: digest, size: size, lastAccess: lastAccess, newer: Self.none, older: Self.none)
        let position: Int32
        if let free = freeSlots.popLast() {
            position = free
            slots[Int(position)] = slot
        } else {
            position = Int32(slots.count)
            slots.append(slot)
        }
        positions[digest] = position
        totalBytes += size
        linkAsNewest(position)
    }

    /// Adds an entry found on disk (another process's), placed by its last access: as the oldest entry
    /// if it is older than all, otherwise by walking from the most recent end, at most 256 steps, so
    /// that a rescan adding many entries never holds the lock for long. Does nothing if it is known.
    mutating func insertByAge(_ digest: EntryDigest, size: Int64, lastAccess: Int64) {
        guard positions[digest] == nil else { return }
        let wasOldest = oldest
        insert(digest, size: size, lastAccess: lastAccess)
        let position = positions[digest]!
        if wasOldest != Self.none, lastAccess <= slots[Int(wasOldest)].lastAccess {
            unlink(position)
            linkBefore(wasOldest, position)
            return
        }
        var steps = 0
        while steps < 256, slots[Int(position)].older != Self.none,
            slots[Int(slots[Int(position)].older)].lastAccess > lastAccess
        {
            let older = slots[Int(position)].older
            unlink(position)
            linkBefore(older, position)
            steps += 1
        }
    }

    /// Marks an entry used now; `false` if it is not in the index.
    @discardableResult
    mutating func touch(_ digest: EntryDigest, at time: Int64) -> Bool {
        guard let position = positions[digest] else { return false }
        slots[Int(position)].lastAccess = time
        moveToNewest(position)
        return true
    }

    /// Removes an entry.
    /// - Returns: its size, or `nil` if it was not in the index.
    @discardableResult
    mutating func remove(_ digest: EntryDigest) -> Int64? {
        guard let position = positions.removeValue(forKey: digest) else { return nil }
        unlink(position)
        let size = slots[Int(position)].size
        totalBytes -= size
        freeSlots.append(position)
        return size
    }

    /// The least recently used entry for which `isEligible` is true.
    func leastRecentlyUsed(where isEligible: (EntryDigest) -> Bool) -> EntryDigest? {
        var position = oldest
        while position != Self.none {
            let slot = slots[Int(position)]
            if isEligible(slot.digest) { return slot.digest }
            position = slot.newer
        }
        return nil
    }

    /// Every entry, for the index snapshot.
    var entries: [ScannedEntry] {
        positions.map { digest, position in
            let slot = slots[Int(position)]
            return ScannedEntry(digest: digest, size: slot.size, lastAccess: slot.lastAccess)
        }
    }

    /// Every entry, for a rescan's comparison with the directory.
    var digests: Dictionary<EntryDigest, Int32>.Keys { positions.keys }

    private mutating func moveToNewest(_ position: Int32) {
        guard position != newest else { return }
        unlink(position)
        linkAsNewest(position)
    }

    private mutating func linkAsNewest(_ position: Int32) {
        slots[Int(position)].older = newest
        slots[Int(position)].newer = Self.none
        if newest != Self.none { slots[Int(newest)].newer = position }
        newest = position
        if oldest == Self.none { oldest = position }
    }

    /// Links `position` just older than `anchor`.
    private mutating func linkBefore(_ anchor: Int32, _ position: Int32) {
        let older = slots[Int(anchor)].older
        slots[Int(position)].newer = anchor
        slots[Int(position)].older = older
        slots[Int(anchor)].older = position
        if older != Self.none { slots[Int(older)].newer = position } else { oldest = position }
    }

    private mutating func unlink(_ position: Int32) {
        let slot = slots[Int(position)]
        if slot.newer != Self.none { slots[Int(slot.newer)].older = slot.older } else { newest = slot.older }
        if slot.older != Self.none { slots[Int(slot.older)].newer = slot.newer } else { oldest = slot.newer }
        slots[Int(position)].newer = Self.none
        slots[Int(position)].older = Self.none
    }
}
