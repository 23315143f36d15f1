import OriginCache

/// The server's memory budget (`--memory-cache-size`) and what it holds: a quarter for rewritten playlists, the
/// rest for small hot objects. Renderings too large for memory go to disk: a sixteenth of the cache's bound, from
/// 64 MiB to 1 GiB.
struct MemoryTiers: Sendable {
    /// Rewritten playlists, by key and origin version.
    let playlists: RenderedPlaylists
    /// Whole bodies of small hot objects.
    let hotObjects: HotObjects

    init(configuration: ServerConfiguration) {
        let budget = configuration.memoryCacheBytes
        let fileBytes = Int(clamping: min(max(configuration.fill.maxCacheBytes / 16, 64 << 20), 1 << 30))
        playlists = RenderedPlaylists(
            maxBytes: budget / 4, maxFileBytes: fileBytes, cacheDirectory: configuration.cacheDirectory)
        hotObjects = HotObjects(maxBytes: budget - budget / 4)
    }
}
