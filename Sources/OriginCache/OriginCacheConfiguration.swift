import OriginClient

/// How a cache directory is filled from origins: what ``CachedOrigin`` needs, shared by `serve` and `prefetch`.
public struct OriginCacheConfiguration: Sendable {
    /// The cache directory.
    public var cacheDirectory: String = "./hlscache-cache"
    /// The cache's size bound, in bytes.
    public var maxCacheBytes: Int64 = 10 * 1_000_000_000
    /// Which origins may be fetched (the SSRF guard).
    public var addressPolicy = AddressPolicy(allowedHosts: ["*"], allowPrivateNetworks: false)
    /// Connect plus first-byte timeout of an origin request.
    public var originTimeout: Duration = .seconds(10)
    /// How long a manifest not known to be live may take to arrive in all (live playlists: about one target
    /// duration); past it the fetch fails with a timeout.
    public var manifestTimeout: Duration = .seconds(15)
    /// The largest object fetched, in bytes.
    public var maxObjectBytes: Int64 = 512 << 20
    /// Freshness of a VOD media playlist whose origin says nothing.
    public var vodPlaylistTTL: Duration = .seconds(24 * 3600)
    /// Freshness of a multivariant playlist whose origin says nothing.
    public var multivariantPlaylistTTL: Duration = .seconds(60)
    /// How long a 404 or 410 for an object that is not a manifest is remembered (0: never). Players probe past the
    /// end of a `$Number$` stream on every play; manifests are never cached negatively, so a live one is never
    /// held back past its refresh period.
    public var negativeTTL: Duration = .seconds(10)
    /// Headers, `User-Agent` and upstream proxy for every origin request.
    public var originAccess = OriginAccess()
    /// The query parameters left out of cache keys.
    public var cacheKeys = CacheKeyPolicy()
    /// This node's name, sent in `Via` on every origin request (a server's; `nil`: no `Via`).
    public var nodeName: String?
    /// The most origin fetches in flight at once (`--max-fills`); a miss past it is answered 503.
    public var maxFills: Int = 1024
    /// The parent hlscache every origin fetch goes through (`--parent`); the origin client then reaches the parent's
    /// host alone, and the parent applies its own address policy to the origins.
    public var parent: ParentTier?

    /// The defaults: `./hlscache-cache`, 10 GB, any public host, 10 s, 512 MiB, 24 h and 60 s.
    public init() {}
}
