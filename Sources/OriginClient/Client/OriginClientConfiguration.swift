/// The version of hlscache, sent in the default `User-Agent`.
package let hlscacheVersion = "0.1.0"

/// How an ``OriginClient`` fetches: policy, timeouts, limits, headers and transport options.
public struct OriginClientConfiguration: Sendable {
    /// Which hosts and addresses may be fetched from.
    public var policy: AddressPolicy
    /// Connect, first-byte, stall and total timeouts.
    public var timeouts: OriginTimeouts
    /// The most redirects followed per fetch; every hop is checked by ``policy``.
    public var maxRedirects: Int
    /// How many times a `GET` is retried after a connection failure or a 502, 503 or 504 answer,
    /// before any of the response reached the caller.
    public var maxRetries: Int
    /// Headers sent with every request (tokens, cookies, referer). `Authorization`, `Cookie` and
    /// `Proxy-Authorization` are not sent to a redirect target on another origin.
    public var extraHeaders: [(name: String, value: String)]
    /// Headers sent to the hosts of a pattern (`--origin-header`), after ``extraHeaders``; also to redirect
    /// targets that match.
    public var originHeaders: [OriginHeader] = []
    /// The `User-Agent` header.
    public var userAgent: String
    /// An upstream proxy URL (`http://proxy:3128`), or `nil` for direct connections (proxy environment
    /// variables are ignored). With a proxy, the proxy resolves origin names, so only host patterns and IP
    /// literals are checked; the proxy must enforce its own egress rules.
    public var proxy: String?
    /// Hosts reached directly despite ``proxy`` (`NO_PROXY`'s syntax: `example.com` also covers its subdomains,
    /// `*` covers all). Direct connections get the address checks.
    public var noProxy: [String] = []
    /// A PEM file of CA certificates to verify origins with, instead of the system's.
    public var caBundle: String?
    /// The largest body accepted, or `nil` for no limit.
    public var maxBodyBytes: Int64?
    /// The most body bytes buffered per transfer ahead of a slow reader before the transfer is paused.
    public var maxBufferedBytesPerTransfer: Int
    /// How many threads run transfers, each with its own curl multi handle (and so its own connection, DNS and TLS
    /// session caches); a new transfer goes to the thread with the fewest. Default ``defaultWorkerThreads``.
    ///
    /// One thread is the ceiling of a busy client: it copies every byte twice, from the socket into curl's buffer
    /// and from there into the reader's chunk. On a 2-core VM on loopback, one thread fetched 2 MiB objects at
    /// 0.65-0.83 of the curl command line's rate; two threads, one per core, fetch ahead of it.
    public var workerThreads: Int = OriginClientConfiguration.defaultWorkerThreads
    /// The processor each worker thread is bound to, by the thread's number (a thread past the list's end is not
    /// bound); empty, the default: the scheduler places them. Binding that fails leaves a thread unbound
    /// (``OriginClient/boundWorkerProcessors`` tells).
    public var workerProcessors: [Int] = []
    /// What the worker threads are called, followed by their number (`hlscache-curl0`, …): each client of a process
    /// names its own, so that `top -H`, `perf` and a test tell them apart. Linux keeps 15 bytes of a thread's name.
    public var threadName: String = "hlscache-curl"

    /// One thread per processor the process may use (its affinity, and its cgroup's CPU quota), at most 4: as many
    /// copies in parallel as there are cores to run them.
    public static var defaultWorkerThreads: Int {
        min(4, UsableProcessors.count)
    }

    /// The proxy a request to `host` goes through, or `nil` for a direct connection.
    func proxy(for host: String) -> String? {
        guard let proxy else { return nil }
        let host = HostPattern.normalize(host: host)
        for entry in noProxy {
            let suffix = HostPattern.normalize(host: entry.hasPrefix(".") ? String(entry.dropFirst()) : entry)
            if suffix == "*" || host == suffix || host.hasSuffix("." + suffix) { return nil }
        }
        return proxy
    }

    /// The `NO_PROXY` (or `no_proxy`) list of `environment`.
    public static func noProxy(environment: [String: String]) -> [String] {
        (environment["NO_PROXY"] ?? environment["no_proxy"] ?? "").split(separator: ",")
            .map { $0.filter { $0 != " " } }.filter { !$0.isEmpty }
    }

    /// `hlscache/<version>`.
    public static let defaultUserAgent = "hlscache/\(hlscacheVersion)"

    /// Creates a configuration.
    /// - Parameters:
    ///   - policy: the address policy (default: any public host).
    ///   - timeouts: the timeouts.
    ///   - maxRedirects: the most redirects followed (default 5).
    ///   - maxRetries: retries of a failed `GET` (default 1).
    ///   - extraHeaders: headers sent with every request.
    ///   - userAgent: the `User-Agent` (default `hlscache/<version>`).
    ///   - proxy: an upstream proxy URL.
    ///   - caBundle: a CA bundle path.
    ///   - maxBodyBytes: the largest body accepted.
    ///   - maxBufferedBytesPerTransfer: the read-ahead per transfer (default 1 MiB).
    public init(
        policy: AddressPolicy = AddressPolicy(),
        timeouts: OriginTimeouts = OriginTimeouts(),
        maxRedirects: Int = 5,
        maxRetries: Int = 1,
        extraHeaders: [(name: String, value: String)] = [],
        userAgent: String = OriginClientConfiguration.defaultUserAgent,
        proxy: String? = nil,
        caBundle: String? = nil,
        maxBodyBytes: Int64? = nil,
        maxBufferedBytesPerTransfer: Int = 1 << 20
    ) {
        self.policy = policy
        self.timeouts = timeouts
        self.maxRedirects = maxRedirects
        self.maxRetries = maxRetries
        self.extraHeaders = extraHeaders
        self.userAgent = userAgent
        self.proxy = proxy
        self.caBundle = caBundle
        self.maxBodyBytes = maxBodyBytes
        self.maxBufferedBytesPerTransfer = maxBufferedBytesPerTransfer
    }

    /// Checks the values that would make the client misbehave.
    func validate() throws(OriginError) {
        func invalid(_ reason: String) -> OriginError { .invalidConfiguration(reason: reason) }
        let timeouts = [timeouts.connect, timeouts.firstByte, timeouts.stall, timeouts.total]
        guard timeouts.allSatisfy({ $0 > .zero }) else { throw invalid("timeouts must be positive") }
        guard maxRedirects >= 0 else { throw invalid("maxRedirects must not be negative") }
        guard maxRetries >= 0 else { throw invalid("maxRetries must not be negative") }
        guard maxBufferedBytesPerTransfer > 0 else { throw invalid("maxBufferedBytesPerTransfer must be positive") }
        guard (1...64).contains(workerThreads) else { throw invalid("workerThreads must be between 1 and 64") }
        guard workerProcessors.allSatisfy({ (0..<1024).contains($0) }) else {
            throw invalid("workerProcessors must be processor numbers from 0 to 1023")
        }
        guard !threadName.isEmpty, threadName.utf8.allSatisfy({ (0x21...0x7e).contains($0) }) else {
            throw invalid("threadName must be printable ASCII with no spaces")
        }
        guard (maxBodyBytes ?? 0) >= 0 else { throw invalid("maxBodyBytes must not be negative") }
        if let field = PreparedRequest.invalidHeader(in: extraHeaders) {
            throw invalid("extra header \(field) has an invalid name or value")
        }
        if let proxy, proxy.isEmpty { throw invalid("proxy must be nil or a URL") }
        if userAgent.contains(where: { $0 == "\r" || $0 == "\n" }) { throw invalid("userAgent contains a line break") }
    }
}
