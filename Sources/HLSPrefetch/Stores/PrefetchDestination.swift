import OriginCache
import OriginClient

/// Where `hlscache prefetch` puts what it fetches.
public enum PrefetchDestination: Sendable {
    /// The cache directory a server reads (`--cache-dir`); safe while a server runs on it.
    case cacheDirectory(CachedOrigin)
    /// A running hlscache (`--server BASE_URL`), pulled through so that it caches.
    case server(baseURL: String, client: OriginClient)
    /// A self-contained folder any HLS player can open (`--output DIR`).
    case output(directory: String, client: OriginClient)

    func makeStore() throws(PrefetchError) -> any PrefetchStore {
        switch self {
        case .cacheDirectory(let origin):
            return CacheDirectoryStore(origin: origin)
        case .server(let baseURL, let client):
            var base = Substring(baseURL)
            while base.hasSuffix("/") { base = base.dropLast() }
            return ServerStore(base: String(base), fetcher: HTTPFetcher(client: client))
        case .output(let directory, let client):
            let files = OutputFiles(root: directory)
            do {
                try files.prepare()
            } catch {
                client.shutdown()
                throw PrefetchError(.destination, "\(error)")
            }
            return OutputFolderStore(files: files, fetcher: HTTPFetcher(client: client))
        }
    }
}
