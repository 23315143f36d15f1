import SegmentCache

/// An origin that is down: every fetch fails. For checking what a cache serves by itself.
struct DeadOrigin: ObjectSource {
    func fetch(_ key: CacheKey) async throws -> SourceResponse {
        throw FakeOriginError(url: key.url)
    }
}
