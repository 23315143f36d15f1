import Foundation
import Glibc
import Synchronization

extension SegmentCache {
    /// Removes every entry of `url`: the whole object and each byte range of it this process knows of. Fills of
    /// them in flight still serve their readers but are not published.
    /// - Parameter url: the key URL (``CacheKey/url``), exactly.
    /// - Returns: how many entries were removed.
    public func purge(url: String) -> Int {
        let whole = EntryDigest(CacheKey(url: url))
        let ranged = withState { state -> [EntryDigest] in
            for flight in state.flights.values where flight.key.url == url { flight.invalidate() }
            return Array(state.rangedEntries[whole.url] ?? [])
        }
        return ([whole] + ranged).reduce(0) { $0 + (remove($1, key: nil) ? 1 : 0) }
    }

    /// Removes every entry whose key URL starts with `prefix`, reading the key from each entry's header (a walk of
    /// the whole index and of the directory, so that entries another process published, which the index may not
    /// hold yet, go too: an administrative action, not a request path). Fills of matching keys in flight still
    /// serve their readers but are not published.
    /// - Parameter prefix: the start of the key URLs to remove, such as `https://cdn.example/live/`.
    /// - Returns: how many entries were removed.
    public func purge(urlPrefix prefix: String) -> Int {
        let indexed = withState { state -> [EntryDigest] in
            for flight in state.flights.values where flight.key.url.hasPrefix(prefix) { flight.invalidate() }
            return Array(state.index.digests)
        }
        let digests = Set(indexed).union(DirectoryScanner.scan(root: layout.root).map(\.digest))
        var removed = 0
        for digest in digests {
            guard let entry = openEntry(digest, expecting: nil) else { continue }
            let matches = entry.metadata.key.url.hasPrefix(prefix)
            if matches, remove(digest, key: nil) { removed += 1 }
        }
        return removed
    }

    /// Unlinks an entry's file and forgets it (a purge, an invalidation); a fill of it waits until the file is gone.
    /// - Parameter key: the entry's key, for a disk error's log line, when known.
    /// - Returns: whether there was a file to unlink.
    @discardableResult
    func remove(_ digest: EntryDigest, key: CacheKey?) -> Bool {
        withState { $0.beginRemoval(digest) }
        defer { withState { $0.endRemoval(digest) } }
        do throws(SystemError) {
            try operations.unlink(layout.path(of: digest))
            return true
        } catch let error where error.code != ENOENT {
            reportDiskError(error, key: key)
            return false
        } catch {
            return false
        }
    }
}
