import ByteRanges

/// Everything a cache shares between requests, fills and the janitor; lives behind one `Mutex`.
///
/// Every operation on it is O(1) or proportional to what it returns, so no lock holder makes a hit wait;
/// file system calls happen outside the lock.
struct CacheState: Sendable {
    /// Published entries, in least-recently-used order.
    var index = LRUIndex()
    /// Entries hits opened, kept open by their exact key: the next hit on one checks that its file is still the
    /// published one (``SegmentCache/lookup(_:freshness:)``) instead of hashing, opening and decoding it again.
    private(set) var openEntries = ClockMap<CacheKey, StoredEntry>(capacity: CacheState.openEntryCapacity)
    /// The key each open entry is held under, by digest, so that removing an entry lets its file go.
    private var openEntryKeys: [EntryDigest: CacheKey] = [:]
    /// Open entries let go under the lock: the lock's holder closes them after leaving it
    /// (``SegmentCache/withState(_:)``), since the last close of an unlinked file frees its blocks.
    private var released: [StoredEntry] = []
    /// The most entries kept open (each holds a descriptor).
    static let openEntryCapacity = 256
    /// Fills in flight, by the digest of their key.
    var flights: [EntryDigest: Flight] = [:]
    /// What to call when the fill in flight for a digest ends (``SegmentCache/whenFillEnds(_:_:)``).
    var fillEndCallbacks: [EntryDigest: [@Sendable () -> Void]] = [:]
    /// Entries being unlinked by eviction or invalidation, with their sizes; a fill of one waits before
    /// publishing. Their bytes still count against the bound until the unlink is done, so the files on
    /// disk never exceed it either.
    private(set) var evicting: [EntryDigest: Int64] = [:]
    private var evictingBytes: Int64 = 0
    /// How many entries have been forgotten (``removeEntry(_:)``), so that adopting a file opened before a removal
    /// (``adopt(_:size:at:ifNoRemovalSince:)``) can tell that it may be that file.
    private(set) var removals: UInt64 = 0
    /// How many entries have been added to the index, and fills have ended (a fill's entry is counted before its file
    /// is renamed into place, and has its name once the fill ends): a lookup that found no file forgets the entry
    /// only if this has not moved since it looked (``SegmentCache/openEntry(_:expecting:writable:)``).
    private(set) var arrivals: UInt64 = 0
    /// Entries whose last access changed since it was last written to their file's modification time.
    var dirtyAccess: Set<EntryDigest> = []
    /// Ranged entries by URL, to find one containing a requested range.
    var rangedEntries: [URLDigest: Set<EntryDigest>] = [:]
    /// The ranges of ranged entries whose header has been read.
    var knownRanges: [EntryDigest: ByteRange] = [:]
    /// Fill tasks, cancelled and awaited by `close()`.
    var fillTasks: [UInt64: FillTask] = [:]
    var nextFillID: UInt64 = 0
    var isClosed = false
    /// The index came from a snapshot: the janitor's first pass rescans the directory.
    var needsRescan = false
    /// `close()` wrote the snapshot.
    var snapshotWritten = false

    init() {}

    /// Builds the state from the directory scan.
    init(scanned: [ScannedEntry]) {
        index = LRUIndex(scanned: scanned)
        for entry in scanned where entry.digest.isRanged {
            rangedEntries[entry.digest.url, default: []].insert(entry.digest)
        }
    }

    /// A fill's flight left the table: its entry, if it kept one, has its file's name now.
    mutating func endFlight(_ digest: EntryDigest) {
        arrivals &+= 1
        flights[digest] = nil
    }

    /// Records an entry published here; its last access is written to the file by the next janitor pass,
    /// as the file's own modification time comes from the system clock, not the cache's.
    mutating func addEntry(_ digest: EntryDigest, size: Int64, lastAccess: Int64, range: ByteRange?) {
        arrivals &+= 1
        releaseOpen(digest)
        index.insert(digest, size: size, lastAccess: lastAccess)
        dirtyAccess.insert(digest)
        noteRange(digest, range)
    }

    /// Records an entry found on disk, placing it by its age; does nothing if it is known.
    mutating func addFoundEntry(_ digest: EntryDigest, size: Int64, lastAccess: Int64) {
        arrivals &+= 1
        index.insertByAge(digest, size: size, lastAccess: lastAccess)
        if digest.isRanged { rangedEntries[digest.url, default: []].insert(digest) }
    }

    /// Learns the range of a ranged entry from its header.
    mutating func noteRange(_ digest: EntryDigest, _ range: ByteRange?) {
        guard let range, digest.isRanged else { return }
        rangedEntries[digest.url, default: []].insert(digest)
        knownRanges[digest] = range
    }

    /// Forgets an entry.
    /// - Returns: its size, if it was known.
    @discardableResult
    mutating func removeEntry(_ digest: EntryDigest) -> Int64? {
        removals &+= 1
        releaseOpen(digest)
        dirtyAccess.remove(digest)
        if digest.isRanged {
            knownRanges[digest] = nil
            rangedEntries[digest.url]?.remove(digest)
            if rangedEntries[digest.url]?.isEmpty == true { rangedEntries[digest.url] = nil }
        }
        return index.remove(digest)
    }

    /// Notes a hit on a known entry: it becomes the most recently used.
    /// - Returns: whether the entry is known; one that is not is left unknown (see ``adopt(_:size:at:ifNoRemovalSince:)``).
    mutating func touch(_ digest: EntryDigest, at time: Int64) -> Bool {
        guard index.touch(digest, at: time) else { return false }
        dirtyAccess.insert(digest)
        return true
    }

    /// Records a hit on an entry the index did not know, whose file was seen still named after the lock was left at
    /// `removalsBefore` (another process published it); nothing if any entry was forgotten since, or this one is being
    /// unlinked or filled, as the file seen may be one evicted meanwhile: counting it would put bytes no file holds
    /// over the bound. The janitor's next scan finds an entry left out.
    mutating func adopt(_ digest: EntryDigest, size: Int64, at time: Int64, ifNoRemovalSince removalsBefore: UInt64) {
        guard removals == removalsBefore, !isBeingRemoved(digest), flights[digest] == nil else { return }
        arrivals &+= 1
        if !index.touch(digest, at: time) { index.insert(digest, size: size, lastAccess: time) }
        dirtyAccess.insert(digest)
    }

    /// Picks the next entry to evict so that `incoming` more bytes fit within `maxBytes`, and marks it
    /// as being evicted; `nil` when everything fits or nothing can go. Entries being filled or
    /// evicted, and `keeping`, are never picked.
    mutating func nextVictim(toFit incoming: Int64, within maxBytes: Int64, keeping: EntryDigest?) -> EntryDigest? {
        guard index.totalBytes + evictingBytes + incoming > maxBytes else { return nil }
        let flights = self.flights
        guard let victim = index.leastRecentlyUsed(where: { $0 != keeping && flights[$0] == nil }) else { return nil }
        beginRemoval(victim)
        return victim
    }

    /// Forgets an entry and marks it as being unlinked, until ``endRemoval(_:)``.
    mutating func beginRemoval(_ digest: EntryDigest) {
        let size = removeEntry(digest) ?? 0
        evicting[digest, default: 0] += size
        evictingBytes += size
    }

    /// The entry's file is gone.
    mutating func endRemoval(_ digest: EntryDigest) {
        evictingBytes -= evicting.removeValue(forKey: digest) ?? 0
    }

    /// The bytes of known entries and of those being unlinked.
    var pendingBytes: Int64 { index.totalBytes + evictingBytes }

    /// The size an entry being unlinked had.
    func removalSize(_ digest: EntryDigest) -> Int64 { evicting[digest] ?? 0 }

    /// Whether an entry's file is being unlinked.
    func isBeingRemoved(_ digest: EntryDigest) -> Bool { evicting[digest] != nil }

    // MARK: Open entries

    /// The entry held open for `key`, marked as used.
    mutating func openEntry(for key: CacheKey) -> StoredEntry? { openEntries.value(forKey: key) }

    /// Keeps `entry` open for hits on `key` (its exact key), in place of what was held for it.
    /// Its ``StoredEntry/heldToken`` stays the one held before when it is the same file with the same expiry (a
    /// check that found nothing changed); otherwise the old one is revoked, as is every evicted entry's.
    mutating func holdOpen(_ entry: StoredEntry, for key: CacheKey) {
        var entry = entry
        let held = openEntries.peek(key)
        if let held, held.file === entry.file, held.metadata.expiry == entry.metadata.expiry, held.heldToken != nil {
            entry.heldToken = held.heldToken
        } else {
            held?.heldToken?.revoke()
            entry.heldToken = HeldToken()
        }
        for evicted in openEntries.insert(entry, forKey: key) {
            if evicted.digest != entry.digest { openEntryKeys[evicted.digest] = nil }
            if evicted.heldToken !== entry.heldToken { evicted.heldToken?.revoke() }
            released.append(evicted)
        }
        // CLOCK may have evicted the newcomer itself: then it is not held.
        let isHeld = openEntries.contains(key)
        if !isHeld { entry.heldToken?.revoke() }
        openEntryKeys[entry.digest] = isHeld ? key : nil
    }

    /// Lets go of the entry held open for `digest`; with `file`, only if it is still that file.
    mutating func releaseOpen(_ digest: EntryDigest, ifFile file: OpenFile? = nil) {
        guard let key = openEntryKeys[digest], let held = openEntries.peek(key) else { return }
        if let file, held.file !== file { return }
        held.heldToken?.revoke()
        openEntryKeys[digest] = nil
        openEntries.removeValue(forKey: key)
        released.append(held)
    }

    /// Lets go of every entry held open.
    mutating func releaseAllOpen() {
        for key in openEntryKeys.values {
            if let held = openEntries.removeValue(forKey: key) {
                held.heldToken?.revoke()
                released.append(held)
            }
        }
        openEntryKeys = [:]
    }

    /// The entries let go since the last call, to close outside the lock.
    mutating func takeReleased() -> [StoredEntry] {
        guard !released.isEmpty else { return [] }
        defer { released = [] }
        return released
    }
}

/// A fill's task, as the state records it.
enum FillTask {
    /// Being started outside the lock (``FillStart/immediate(executorPreference:)``): recorded within microseconds.
    case starting
    /// Running.
    case running(Task<Void, Never>)

    /// The task, once it runs.
    var task: Task<Void, Never>? {
        if case .running(let task) = self { return task }
        return nil
    }
}
