import ByteRanges
import Foundation
import Glibc
import Synchronization

extension SegmentCache {
    /// A fresh published entry serving `key`, found without waiting: no fill is started or joined.
    ///
    /// This is the hit path for a server that answers on its event loop: it opens and validates the entry file
    /// (an `open` and a `pread` of the header, served from the page cache for hot entries). A hit is counted only
    /// when `accept` takes it; on `nil` the caller goes through ``fetch(_:freshness:)``, which counts what it finds.
    /// - Parameters:
    ///   - key: the object wanted.
    ///   - accept: whether the caller can answer from this entry.
    /// - Returns: the hit, whose body can be sent with ``CacheResponse/withFileRegion(_:)``, or `nil`.
    public func publishedResponse(
        for key: CacheKey, accepting accept: (EntryMetadata) -> Bool = { _ in true }
    ) -> CacheResponse? {
        var lease: HitLease?
        return publishedResponse(for: key, lease: &lease, accepting: accept)
    }

    /// What lets a caller answer the same hit again without a lookup for a short while (``renewedHit(_:)``): given
    /// with a hit on an entry checked within ``Configuration/heldEntryRecheck``, it holds while the cache still holds
    /// that entry open for its key (the same file, with the same expiry: a publish, a removal, a purge, an eviction
    /// or a rewritten expiry ends it), that check is recent and the entry is fresh; exactly when a lookup would find
    /// the same entry through its hot path. A hit answered on a lease does not make its entry the most recently used;
    /// the lookup after the lease ends does.
    public struct HitLease: Sendable {
        let token: HeldToken
        let verifiedAt: Int64
        let expiry: Date?
    }

    /// ``publishedResponse(for:accepting:)``, with a ``HitLease`` in `lease` when the hit came through the hot path
    /// (an entry checked within the recheck period); `nil` there otherwise.
    /// - Parameter fetchedSince: for a request that waited for a fill, when it arrived: the entry fetched since then
    ///   is taken even when its freshness has passed (``Freshness/fetchedSince(_:)``).
    public func publishedResponse(
        for key: CacheKey, lease: inout HitLease?, fetchedSince: Date? = nil,
        accepting accept: (EntryMetadata) -> Bool
    ) -> CacheResponse? {
        let freshness = fetchedSince.map(Freshness.fetchedSince) ?? .fresh
        guard let hit = publishedEntry(key, freshness: freshness, lease: &lease), accept(hit.metadata) else {
            lease = nil
            return nil
        }
        counters.hits.increment()
        return hit
    }

    /// Whether `lease` still holds (see ``HitLease``); a hit is counted when it does, which the caller answers as it
    /// answered the hit the lease came with.
    public func renewedHit(_ lease: HitLease) -> Bool {
        guard !lease.token.isRevoked,
            Self.monotonicMilliseconds() &- lease.verifiedAt < heldEntryRecheckMilliseconds
        else { return false }
        if let expiry = lease.expiry, expiry <= clock.now() { return false }
        counters.hits.increment()
        return true
    }

    /// Whether this process's index holds an entry of `key` (fresh or not): no file is opened, nothing is counted.
    /// For a decision about fetching it ahead, not for answering from it.
    public func holds(_ key: CacheKey) -> Bool {
        let digest = EntryDigest(key)
        return withState { $0.index.contains(digest) }
    }

    /// Counts a hit answered without a lookup of its own, from an entry its caller looked up for an identical request
    /// moments before (the requests an LL-HLS fill woke, answered together).
    public func countHit() {
        counters.hits.increment()
    }

    /// A published entry serving `key`: its own, or one of its URL whose bytes contain its range. A ranged key
    /// whose range runs past the end of its URL's whole object, when that is held, gets the whole object (its
    /// metadata names the whole key): the requester clips the range to it.
    func publishedEntry(_ key: CacheKey, freshness: Freshness) -> CacheResponse? {
        var lease: HitLease?
        return publishedEntry(key, freshness: freshness, lease: &lease)
    }

    /// ``lookup(_:freshness:)``, with a ``HitLease`` in `lease` when the hot path found the entry.
    private func publishedEntry(_ key: CacheKey, freshness: Freshness, lease: inout HitLease?) -> CacheResponse? {
        let now = clock.now()
        let accepts = { (metadata: EntryMetadata) -> Bool in
            switch freshness {
            case .any: true
            case .fresh: !metadata.isExpired(at: now)
            case .fetchedSince(let date): !metadata.isExpired(at: now) || metadata.fetchedAt >= date
            }
        }
        let chunkSize = configuration.readChunkSize
        lease = nil
        if let (entry, hotLease) = recentlyCheckedHit(key, at: now, accepts: accepts) {
            lease = hotLease
            return entry.response(for: key, window: nil, chunkSize: chunkSize)
        }
        if let entry = heldOrOpenedEntry(key), accepts(entry.metadata) {
            noteHit(entry, at: now)
            return entry.response(for: key, window: nil, chunkSize: chunkSize)
        }
        guard let range = key.range else { return nil }
        let digest = EntryDigest(key)
        if let whole = heldOrOpenedEntry(key.wholeObject), accepts(whole.metadata) {
            noteHit(whole, at: now)
            guard range.upperBound <= whole.header.bodyLength else {
                // A range running past the end (or starting past it) of a whole object held here: the whole
                // object answers, and the requester cuts it as RFC 9110 says (to the end, or 416).
                return whole.response(for: key.wholeObject, window: nil, chunkSize: chunkSize)
            }
            return whole.response(for: key, window: range, chunkSize: chunkSize)
        }
        let candidates = withState { state in
            (state.rangedEntries[digest.url] ?? []).filter { $0 != digest }.map { ($0, state.knownRanges[$0]) }
        }
        for (candidate, knownRange) in candidates where knownRange?.contains(range) ?? true {
            guard let entry = openEntry(candidate, expecting: nil), let entryRange = entry.metadata.key.range else {
                continue
            }
            withState { $0.noteRange(candidate, entryRange) }
            guard entry.metadata.key.url == key.url, entryRange.contains(range), accepts(entry.metadata) else {
                continue
            }
            noteHit(entry, at: now)
            let window = ByteRange(offset: range.offset - entryRange.offset, length: range.length)
            return entry.response(for: key, window: window, chunkSize: chunkSize)
        }
        return nil
    }

    /// The hot path of ``lookup(_:freshness:)``: the entry a recent hit left open for exactly `key` and checked within
    /// ``Configuration/heldEntryRecheck``, if `accepts` takes it, marked used, all under one lock. `nil`: the full
    /// lookup decides (nothing held, a check due, not accepted, or no longer in the index).
    private func recentlyCheckedHit(
        _ key: CacheKey, at now: Date, accepts: (EntryMetadata) -> Bool
    ) -> (StoredEntry, HitLease?)? {
        let monotonic = Self.monotonicMilliseconds()
        let recheck = heldEntryRecheckMilliseconds
        let time = now.millisecondsSince1970
        return withState { state in
            guard let held = state.openEntry(for: key), held.verifiedAt != 0, monotonic &- held.verifiedAt < recheck,
                accepts(held.metadata), state.touch(held.digest, at: time)
            else { return nil }
            state.noteRange(held.digest, held.metadata.key.range)
            let lease = held.heldToken.map {
                HitLease(token: $0, verifiedAt: held.verifiedAt, expiry: held.metadata.expiry)
            }
            return (held, lease)
        }
    }

    /// The published entry of exactly `key`: the one a recent hit left open when its file is still the published one,
    /// else opened now (and then kept open).
    private func heldOrOpenedEntry(_ key: CacheKey) -> StoredEntry? {
        if let held = heldEntry(key) { return held }
        guard var entry = openEntry(EntryDigest(key), expecting: key) else { return nil }
        entry.verifiedAt = Self.monotonicMilliseconds()  // opened and read just now: as good as a check
        let opened = entry
        withState { $0.holdOpen(opened, for: key) }
        return entry
    }

    /// The entry a recent hit on `key` left open, if its file still has a name (replacing or removing an entry, here
    /// or in another process sharing the directory, unlinks its file), with the expiry its header holds now (one
    /// that has an expiry may have had it rewritten in place). One `fstat`, and a `pread` of 8 bytes for an entry
    /// with an expiry, instead of a digest, an `open`, a header read and decode, and a `close`; and none at all
    /// within ``Configuration/heldEntryRecheck`` of the last check (this process's own replacements and removals
    /// let go of the held entry at once, so only another process's change can take that long to be seen).
    private func heldEntry(_ key: CacheKey) -> StoredEntry? {
        guard let held = withState({ $0.openEntry(for: key) }) else { return nil }
        let now = Self.monotonicMilliseconds()
        if held.verifiedAt != 0, now &- held.verifiedAt < heldEntryRecheckMilliseconds { return held }
        do throws(SystemError) {
            let (links, size) = try operations.linksAndSize(of: held.file.descriptor)
            guard links > 0 else {
                withState { $0.releaseOpen(held.digest, ifFile: held.file) }
                return nil
            }
            guard size == held.fileSize else {
                // Truncated or grown in place (by hand, or a failing disk): never sent as the entry it was.
                withState { $0.releaseOpen(held.digest, ifFile: held.file) }
                removeCorrupt(held.digest, path: layout.path(of: held.digest), key: key)
                return nil
            }
            var checked = held
            if held.metadata.expiry != nil {
                let expiry = EntryHeader.decodedExpiry(try held.file.read(count: 8, at: EntryHeader.expiryOffset))
                if expiry != held.metadata.expiry { checked = held.withExpiry(expiry) }
            }
            checked.verifiedAt = now
            let verified = checked
            withState { state in
                // Only if it is still the file held (a replacement may have come meanwhile).
                if state.openEntry(for: key)?.file === verified.file { state.holdOpen(verified, for: key) }
            }
            return verified
        } catch {
            withState { $0.releaseOpen(held.digest, ifFile: held.file) }
            return nil
        }
    }

    /// ``Configuration/heldEntryRecheck`` in milliseconds.
    private var heldEntryRecheckMilliseconds: Int64 {
        let (seconds, attoseconds) = configuration.heldEntryRecheck.components
        return seconds.multipliedReportingOverflow(by: 1000).overflow
            ? .max : max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    /// `CLOCK_MONOTONIC_COARSE` in milliseconds (a vDSO read, no system call).
    private static func monotonicMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    /// Opens and validates the entry file named by `digest`.
    ///
    /// A missing file is forgotten, unless an entry arrived or a fill ended since the look (a fill counts its entry
    /// before it renames the file into place: the file missed may have its name by now); an unreadable or corrupt
    /// one is counted, logged and removed; a file holding another key (a hash collision, or `expecting` another
    /// range) is left alone.
    /// - Parameters:
    ///   - digest: the entry's name.
    ///   - expecting: the key the entry must hold, or `nil` to accept the key its name was derived from.
    ///   - writable: open for writing, to update the expiry in place.
    func openEntry(_ digest: EntryDigest, expecting key: CacheKey?, writable: Bool = false) -> StoredEntry? {
        guard let arrivalsBefore = arrivalsIfFileMayExist(digest) else { return nil }
        let path = layout.path(of: digest)
        let descriptor: CInt
        do throws(SystemError) {
            descriptor = try operations.open(path, flags: writable ? O_RDWR : O_RDONLY, mode: 0)
        } catch {
            if error.code == ENOENT {
                withState { state in
                    if state.flights[digest] == nil, state.arrivals == arrivalsBefore { state.removeEntry(digest) }
                }
            } else {
                reportDiskError(error, key: key)
            }
            return nil
        }
        let file = OpenFile(descriptor: descriptor, operations: operations)
        do throws(SystemError) {
            let size = try operations.size(of: descriptor)
            var bytes = try file.read(count: Int(min(Int64(EntryHeader.typicalLength), size)), at: 0)
            if let length = EntryHeader.length(ofHeaderStartingWith: bytes), length > bytes.count {
                bytes = try file.read(count: length, at: 0)
            }
            guard let header = EntryHeader(decoding: bytes),
                let headerLength = EntryHeader.length(ofHeaderStartingWith: bytes),
                Int64(headerLength) + header.bodyLength == size
            else {
                removeCorrupt(digest, path: path, key: key)
                return nil
            }
            if let key {
                guard header.metadata.key == key else { return nil }
            } else if EntryDigest(header.metadata.key) != digest {
                removeCorrupt(digest, path: path, key: key)
                return nil
            }
            return StoredEntry(
                digest: digest, file: file, header: header, headerLength: Int64(headerLength), fileSize: size)
        } catch {
            reportDiskError(error, key: key)
            return nil
        }
    }

    /// Whether `digest` may have an entry file: the index holds it, or the index may lack entries the directory has
    /// (built from a snapshot not rescanned yet, or another instance has opened the directory: ``InstanceWatch``).
    /// `false` spares a miss the `open` of a path that is not there.
    func mayHaveFile(_ digest: EntryDigest) -> Bool {
        arrivalsIfFileMayExist(digest) != nil
    }

    /// ``mayHaveFile(_:)``, with the state's count of arrivals (``CacheState/arrivals``) when it was decided;
    /// `nil` when no file can be there.
    private func arrivalsIfFileMayExist(_ digest: EntryDigest) -> UInt64? {
        let (known, arrivals) = withState { ($0.index.contains(digest) || $0.needsRescan, $0.arrivals) }
        guard known || sharesDirectory() else { return nil }
        return arrivals
    }

    /// Whether another instance has opened the cache directory (its entries are not in this index).
    func sharesDirectory() -> Bool {
        let (alone, becameShared) = instanceWatch.check()
        if becameShared {
            log(.debug, "another instance opened the cache directory: misses look for its entries on disk", key: nil)
        }
        return !alone
    }

    /// Marks an entry used now. An entry the index does not know (published by another process sharing the
    /// directory, or evicted since it was opened) is counted only if its file still has a name.
    func noteHit(_ entry: StoredEntry, at now: Date) {
        let time = now.millisecondsSince1970
        let removalsBefore: UInt64? = withState { state in
            guard !state.touch(entry.digest, at: time) else {
                state.noteRange(entry.digest, entry.metadata.key.range)
                return nil
            }
            return state.removals
        }
        guard let removalsBefore, ((try? operations.linkCount(of: entry.file.descriptor)) ?? 0) > 0 else { return }
        withState { state in
            state.adopt(entry.digest, size: entry.fileSize, at: time, ifNoRemovalSince: removalsBefore)
            if state.index.contains(entry.digest) { state.noteRange(entry.digest, entry.metadata.key.range) }
        }
    }

    private func removeCorrupt(_ digest: EntryDigest, path: String, key: CacheKey?) {
        counters.diskErrors.increment()
        log(.warning, "removed corrupt cache entry \(path)", key: key)
        try? operations.unlink(path)
        withState { state in if state.flights[digest] == nil { state.removeEntry(digest) } }
    }
}
