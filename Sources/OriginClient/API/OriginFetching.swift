/// Something that fetches from origins: ``OriginClient``, or a fake in tests.
public protocol OriginFetching: Sendable {
    /// Starts a fetch and returns once the final response's status and headers have arrived.
    ///
    /// Non-2xx answers are returned, not thrown; use ``OriginResponse/checkStatus()`` to throw them.
    /// - Parameter request: what to fetch.
    /// - Returns: the final response (after redirects), its body still streaming.
    /// - Throws: ``OriginError``.
    func fetch(_ request: OriginRequest) async throws -> OriginResponse
}
