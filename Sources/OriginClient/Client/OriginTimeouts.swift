/// The client's timeouts; each covers one phase of a fetch and is reported by ``OriginTimeoutKind``.
public struct OriginTimeouts: Sendable, Hashable {
    /// Name resolution and TCP (and TLS) connection, per connection attempt.
    public var connect: Duration
    /// From the request being sent on a connection to the first byte of the answer, per hop.
    public var firstByte: Duration
    /// The longest time without a byte while the answer streams; time spent paused because the reader
    /// is slow does not count.
    public var stall: Duration
    /// The whole fetch, redirects and retries included, until the last body byte.
    public var total: Duration
    /// The slowest a body may stream, in bytes per second, measured over each ``rateWindow`` after the first byte
    /// (time paused because the reader is slow does not count); 0 turns the check off.
    public var minimumRate: Int = 1024
    /// The window ``minimumRate`` is measured over.
    public var rateWindow: Duration = .seconds(10)

    /// Creates timeouts.
    /// - Parameters:
    ///   - connect: name resolution and connection (default 5 s).
    ///   - firstByte: request sent to first byte of the answer (default 15 s).
    ///   - stall: no byte while streaming (default 15 s).
    ///   - total: the whole fetch (default 300 s).
    public init(
        connect: Duration = .seconds(5),
        firstByte: Duration = .seconds(15),
        stall: Duration = .seconds(15),
        total: Duration = .seconds(300)
    ) {
        self.connect = connect
        self.firstByte = firstByte
        self.stall = stall
        self.total = total
    }

    /// The split of one operator timeout (`--origin-timeout`, connect plus first byte): the first byte gets all of
    /// it, a connection attempt at most the default 5 s (less when the whole is shorter), and a stalled body at least
    /// the default 15 s (more when the whole is longer). Written once, for `serve` and `prefetch`.
    /// - Parameter originTimeout: the operator's timeout.
    public init(originTimeout: Duration) {
        self.init()
        connect = min(connect, originTimeout)
        firstByte = originTimeout
        stall = max(stall, originTimeout)
    }
}
