/// Where the cache gets objects it does not have: the origin, or a fake in tests.
///
/// The server adapts its libcurl origin client to this protocol. A fetch answers with a
/// ``SourceResponse`` as soon as the origin's head has arrived; its body streams afterwards.
///
/// Errors: a fetch that throws fails every requester waiting on that fill with the same error,
/// unchanged, so the server can map it to 502/504. A body that throws midway fails them too,
/// and nothing is stored. An origin answer that must reach the client but must not be stored
/// (a 404, a `no-store` response) is returned with ``SourceResponse/cacheable`` set to `false`.
public protocol ObjectSource: Sendable {
    /// Fetches the object `key` names: its whole body, or the bytes of `key.range`.
    /// - Parameter key: the URL, and the range for a ranged object.
    /// - Returns: the origin's answer, its body still streaming.
    /// - Throws: whatever the origin failure was; requesters get it as it is.
    func fetch(_ key: CacheKey) async throws -> SourceResponse
}
