import HLSPlaylist
import ManifestURLs
import OriginClient

/// Prefetches by pulling every object through a running hlscache (`--server BASE_URL`), which caches it.
///
/// The tree walked is the one the server serves: its rewritten playlists point back at it.
struct ServerStore: PrefetchStore {
    let base: String
    let fetcher: HTTPFetcher

    func entryURL(for originURL: String) -> String {
        ProxyURL.make(origin: originURL, base: base) ?? originURL
    }

    func playlist(_ url: String, fresh: Bool) async throws -> [UInt8] {
        try await fetcher.playlist(url)
    }

    func store(_ object: PrefetchObject) async throws -> StoreOutcome {
        let response = try await fetcher.get(object.url, range: object.range)
        var bytes: Int64 = 0
        do {
            for try await chunk in response.body { bytes += Int64(chunk.count) }
        } catch {
            throw FailedFetch(error)
        }
        return response.header("x-cache")?.uppercased() == "HIT" ? .present(bytes: bytes) : .fetched(bytes: bytes)
    }

    func close() async {
        fetcher.client.shutdown()
    }
}
