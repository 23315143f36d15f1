/// Which of the client's timeouts fired; see ``OriginTimeouts``.
public enum OriginTimeoutKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// No connection was established within ``OriginTimeouts/connect``.
    case connect
    /// No byte of the response arrived within ``OriginTimeouts/firstByte`` of sending the request.
    case firstByte = "first_byte"
    /// No byte arrived for ``OriginTimeouts/stall`` while the response was streaming.
    case stall
    /// The whole fetch, redirects and retries included, took longer than ``OriginTimeouts/total``.
    case total
    /// The response streamed more slowly than ``OriginTimeouts/minimumRate`` over ``OriginTimeouts/rateWindow``
    /// (time paused for a slow reader not counted): a trickling origin.
    case rate

    /// The raw value: `connect`, `first_byte`, `stall`, `total`, `rate`.
    public var description: String { rawValue }
}
