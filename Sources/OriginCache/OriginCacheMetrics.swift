/// Where the fill policy reports what it does: the server counts it in Prometheus, prefetch ignores it.
public protocol OriginCacheMetrics: Sendable {
    /// One origin request ended: its HTTP status, or the failure's label.
    /// - Parameter status: `200`, `404`, `timeout`, …
    func countOriginRequest(status: String)
    /// Body bytes arrived from an origin.
    /// - Parameter bytes: how many.
    func countOriginBytes(_ bytes: Int)
}

/// Metrics that go nowhere.
public struct NoOriginCacheMetrics: OriginCacheMetrics {
    /// Creates the sink.
    public init() {}
    /// Ignores the request.
    public func countOriginRequest(status: String) {}
    /// Ignores the bytes.
    public func countOriginBytes(_ bytes: Int) {}
}
