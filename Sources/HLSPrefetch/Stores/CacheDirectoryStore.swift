import ByteRanges
import HLSPlaylist
import OriginCache
import SegmentCache

/// Prefetches into the cache directory a server reads (`--cache-dir`), through ``CachedOrigin``: the same keys,
/// playlist checks and expiries as `hlscache serve`, so the server finds every object as a hit.
struct CacheDirectoryStore: PrefetchStore {
    let origin: CachedOrigin

    func entryURL(for originURL: String) -> String { originURL }

    func playlist(_ url: String, fresh: Bool) async throws -> [UInt8] {
        let response: CacheResponse
        do {
            response = try await origin.cache.fetch(origin.keys.key(for: url), freshness: fresh ? .fresh : .any)
        } catch {
            throw FailedFetch(error)
        }
        guard (200..<300).contains(response.metadata.status) else {
            throw FailedFetch.status(response.metadata.status, url: url)
        }
        var bytes: [UInt8] = []
        for try await chunk in response.body { bytes.append(contentsOf: chunk) }
        return bytes
    }

    func store(_ object: PrefetchObject) async throws -> StoreOutcome {
        let key = key(object)
        if let cached = origin.cache.cachedEntry(for: key), (200..<300).contains(cached.metadata.status) {
            return .present(bytes: cached.metadata.contentLength ?? 0)
        }
        let response: CacheResponse
        do {
            response = try await origin.cache.fetch(key)
        } catch {
            throw FailedFetch(error)
        }
        guard (200..<300).contains(response.metadata.status) else {
            throw FailedFetch.status(response.metadata.status, url: object.label)
        }
        var bytes: Int64 = 0
        do {
            for try await chunk in response.body { bytes += Int64(chunk.count) }
        } catch {
            throw FailedFetch(error)
        }
        // Counted once it is in the cache, not once its bytes went by: the fill publishes (syncs and renames) its
        // entry after the body's end, and a run killed meanwhile would lose an object it said it had.
        await publication(of: key)
        return response.disposition == .hit ? .present(bytes: bytes) : .fetched(bytes: bytes)
    }

    /// Returns once no fill of `key` is in flight: its entry is published (or the fill failed, or passed through).
    private func publication(of key: CacheKey) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !origin.cache.whenFillEnds(key, { continuation.resume() }) { continuation.resume() }
        }
    }

    func close() async {
        // Fills whose bodies were drained may still be renaming their entries into place: let them finish.
        await origin.cache.finishFills()
        await origin.close()
    }

    /// The cache key the server uses for an object (made by the same ``CacheKeyPolicy``).
    func key(_ object: PrefetchObject) -> CacheKey {
        origin.keys.key(for: object.url, range: object.range)
    }
}
