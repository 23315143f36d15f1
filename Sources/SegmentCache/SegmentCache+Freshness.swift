import Foundation
import Glibc
import Synchronization

extension SegmentCache {
    /// The published entry serving `key`, expired or not, without fetching anything.
    /// - Parameter key: the object wanted.
    /// - Returns: a hit response, or `nil` when nothing cached serves `key`.
    public func cachedEntry(for key: CacheKey) -> CacheResponse? {
        publishedEntry(key, freshness: .any)
    }

    /// The published entry serving `key` if it has expired: what stale-if-error serves when a refresh fails.
    /// - Parameter key: the object wanted.
    /// - Returns: a hit response whose expiry has passed, or `nil` when there is none (or it is still fresh).
    public func staleEntry(for key: CacheKey) -> CacheResponse? {
        guard let response = publishedEntry(key, freshness: .any), response.metadata.isExpired(at: clock.now()) else {
            return nil
        }
        return response
    }

    /// Removes the negative entries (a remembered 404 or 410) of `keys`: a newer live manifest lists them, so the
    /// origin has them now. Keys the index does not hold cost no look at the disk.
    /// - Parameter keys: the objects a manifest lists.
    /// - Returns: how many were removed.
    @discardableResult
    public func dropNegativeEntries(_ keys: some Sequence<CacheKey>) -> Int {
        var dropped = 0
        for key in keys where mayHaveFile(EntryDigest(key)) {
            guard let entry = publishedEntry(key, freshness: .any), entry.metadata.key == key,
                [404, 410].contains(entry.metadata.status)
            else { continue }
            invalidate(key)
            dropped += 1
        }
        return dropped
    }

    /// Whether a fill of `key` is in flight: a refresh is already on its way.
    public func isFilling(_ key: CacheKey) -> Bool {
        let digest = EntryDigest(key)
        return withState { $0.flights[digest] != nil }
    }

    /// Sets the expiry of `key`'s entry, in place in its header: for a playlist revalidated with the
    /// origin (`304 Not Modified`), which stays as it is but is fresh again.
    /// - Parameters:
    ///   - expiry: the new expiry, or `nil` for never.
    ///   - key: the entry's key (exactly: not a range inside another entry).
    /// - Returns: `false` when there is no such entry or the update failed (a disk error, logged and counted).
    @discardableResult
    public func updateExpiry(_ expiry: Date?, for key: CacheKey) -> Bool {
        guard let entry = openEntry(EntryDigest(key), expecting: key, writable: true) else { return false }
        do throws(PartialWriteError) {
            try operations.writeAll(
                entry.file.descriptor, EntryHeader.encodedExpiry(expiry), at: EntryHeader.expiryOffset)
            noteHit(entry, at: clock.now())
            // A hit's held copy of this entry carries the old expiry: the next hit opens it anew.
            withState { $0.releaseOpen(entry.digest) }
            return true
        } catch {
            reportDiskError(error.underlying, key: key)
            return false
        }
    }

    /// Removes `key`'s entry; a fill of `key` in flight still serves its readers but is not published.
    /// - Parameter key: the entry's key.
    public func invalidate(_ key: CacheKey) {
        let digest = EntryDigest(key)
        withState { state in
            state.flights[digest]?.invalidate()
        }
        remove(digest, key: key)
    }
}
