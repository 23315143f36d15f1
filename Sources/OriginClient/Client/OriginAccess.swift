/// How origins are reached, as the operator configures it once for every origin client of a process (`serve`'s and
/// `prefetch`'s): headers the CDN insists on, the `User-Agent`, an upstream proxy, and how many threads fetch.
public struct OriginAccess: Sendable, Equatable {
    /// Headers for every host or the hosts of a pattern (`--origin-header`).
    public var headers: [OriginHeader] = []
    /// The `User-Agent` (`--user-agent`); `nil`: `hlscache/<version>`.
    public var userAgent: String?
    /// An upstream proxy (`--upstream-proxy`: `http://`, `https://`, `socks5h://`, credentials allowed).
    public var proxy: String?
    /// Hosts reached directly despite the proxy (`NO_PROXY`).
    public var noProxy: [String] = []
    /// Threads running transfers (`--origin-threads`); `nil`: ``OriginClientConfiguration/defaultWorkerThreads``.
    public var workerThreads: Int?
    /// The processor each of those threads is bound to, by number; empty: not bound
    /// (``OriginClientConfiguration/workerProcessors``). A server sets it, with its event loops bound alike.
    public var workerProcessors: [Int] = []

    /// Direct connections, default headers.
    public init() {}

    /// The schemes `--upstream-proxy` accepts.
    public static let proxySchemes = ["http", "https", "socks5", "socks5h", "socks4", "socks4a"]
}

extension OriginClientConfiguration {
    /// Takes the operator's headers, `User-Agent`, proxy, thread count and the threads' processors.
    public mutating func apply(_ access: OriginAccess) {
        if let threads = access.workerThreads { workerThreads = threads }
        workerProcessors = access.workerProcessors
        originHeaders = access.headers
        if let userAgent = access.userAgent { self.userAgent = userAgent }
        proxy = access.proxy
        noProxy = access.noProxy
    }
}
