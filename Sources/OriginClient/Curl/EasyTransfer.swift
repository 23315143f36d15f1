import CCurl

/// The worker-thread side of one fetch: the curl easy handle and everything about the hop in progress.
///
/// Created, used and freed on the worker thread only. Redirects and retries are done here rather than by
/// curl (`CURLOPT_FOLLOWLOCATION` stays off), so every hop's host is checked by the address policy before
/// it is resolved, and a retry never happens after the caller has seen the response.
/// The C callbacks find this object through an unretained pointer; ``WorkerLoop`` keeps it alive until
/// ``cleanup()``.
final class EasyTransfer {
    /// Where the current hop stands.
    enum Phase {
        /// Waiting for the final hop's status and headers.
        case awaitingHeaders
        /// This hop's answer is a redirect or a retriable status; its body is thrown away.
        case discarding(NextHop)
        /// The head went to the caller; body bytes go to the reader.
        case streaming
    }

    /// What follows a discarded hop.
    enum NextHop {
        case redirect(CurlURL)
        case retry
    }

    /// What the loop does after curl reports a hop done.
    enum Completion {
        case nextHop
        case done(TransferStateMachine.Outcome)
    }

    /// The deadline that fires first and which timeout it is.
    struct Deadline {
        var instant: ContinuousClock.Instant
        var kind: OriginTimeoutKind
        var limit: Duration
    }

    /// The most bytes of a redirect or error body read (then the connection is dropped instead of reused).
    static let maxDiscardedBytes = 64 * 1024

    let transfer: Transfer
    /// Where this transfer goes when its reader is to be woken at the end of the worker's round of callbacks.
    let handOvers: PendingHandOvers
    /// Whether this transfer is in `handOvers` now.
    var handOverQueued = false
    let handle: UnsafeMutableRawPointer
    let configuration: OriginClientConfiguration
    /// Whether the handle is in the multi handle.
    var isAdded = false

    // The hop in progress.
    private(set) var current: CurlURL
    var phase = Phase.awaitingHeaders
    var responseHeaders: [(name: String, value: String)] = []
    /// The refusal recorded by the open-socket or pre-request callback, reported instead of curl's error.
    var refusal: OriginError?
    /// An error decided by a callback that then aborted the transfer.
    var failure: OriginError?
    var connectedAt: ContinuousClock.Instant?
    var firstByteSeen = false
    var lastByteAt: ContinuousClock.Instant
    var discardedBytes = 0
    /// Whether the write callback paused the transfer because the reader is behind.
    var pausedForReader = false
    /// Where the current minimum-rate window started (`nil`: at the next byte) and the bytes since.
    var rateWindowStart: ContinuousClock.Instant?
    var rateWindowBytes: Int64 = 0
    /// Body bytes handed to the reader (or buffered for it).
    var receivedBytes: Int64 = 0
    /// The length the body must have, when announced and not content-decoded.
    var expectedLength: Int64?

    // The whole fetch.
    let startedAt: ContinuousClock.Instant
    private(set) var redirectCount = 0
    private(set) var retriesLeft: Int
    private var visited: Set<String>
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>

    /// The URL of the hop in progress.
    var currentURL: String { current.url }

    /// Creates the easy handle and sets the options that do not change between hops.
    init(
        transfer: Transfer, configuration: OriginClientConfiguration, share: UnsafeMutableRawPointer,
        handOvers: PendingHandOvers
    ) throws(OriginError) {
        guard let handle = curl_easy_init() else {
            throw .transferFailed(url: transfer.request.url, detail: "libcurl could not create a handle")
        }
        self.transfer = transfer
        self.handOvers = handOvers
        self.handle = handle
        self.configuration = configuration
        self.current = transfer.request.target
        self.visited = [transfer.request.target.url]
        self.retriesLeft = transfer.request.method == .get ? configuration.maxRetries : 0
        self.startedAt = .now
        self.lastByteAt = startedAt
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
        do {
            try setStaticOptions(share: share)
        } catch {
            cleanup()
            throw error
        }
    }

    /// Frees the handle, header list and error buffer; the handle must be out of the multi handle.
    func cleanup() {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headerList)
        headerList = nil
        errorBuffer.deallocate()
    }

    /// Resets the per-hop state and sets the hop's URL, headers and remaining total time.
    func prepareHop(now: ContinuousClock.Instant) throws(OriginError) {
        phase = .awaitingHeaders
        responseHeaders = []
        refusal = nil
        failure = nil
        connectedAt = nil
        firstByteSeen = false
        lastByteAt = now
        discardedBytes = 0
        pausedForReader = false
        rateWindowStart = nil
        rateWindowBytes = 0
        receivedBytes = 0
        expectedLength = nil
        errorBuffer[0] = 0

        let remaining = startedAt + effectiveTimeouts.total - now
        guard remaining > .zero else {
            throw .timeout(.total, limit: effectiveTimeouts.total, url: currentURL)
        }
        try set(CURLOPT_URL, string: currentURL)
        // Per hop, as a redirect may leave NO_PROXY's hosts; an empty proxy also turns off the environment's.
        try set(CURLOPT_PROXY, string: configuration.proxy(for: current.host) ?? "")
        try set(CURLOPT_NOPROXY, string: "")
        try set(CURLOPT_TIMEOUT_MS, Int(remaining.roundedUpMilliseconds))
        var list: UnsafeMutablePointer<curl_slist>?
        for line in transfer.request.headerLines(for: current) {
            guard let appended = curl_slist_append(list, line) else {
                curl_slist_free_all(list)
                throw .transferFailed(url: currentURL, detail: "out of memory building headers")
            }
            list = appended
        }
        try set(CURLOPT_HTTPHEADER, list: list)
        curl_slist_free_all(headerList)
        headerList = list
    }

    /// Unpauses the transfer after the reader drained its buffer.
    func resume() {
        guard pausedForReader, transfer.prepareResume() else { return }
        pausedForReader = false
        lastByteAt = .now
        rateWindowStart = nil  // time paused for the reader does not count against the origin's rate
        // May call the write callback right away, which may pause again.
        _ = curl_easy_pause(handle, hlscache_CURLPAUSE_CONT)
    }

    /// The client's timeouts, with the request's own total when it is shorter.
    var effectiveTimeouts: OriginTimeouts {
        var timeouts = configuration.timeouts
        if let total = transfer.request.totalTimeout { timeouts.total = min(timeouts.total, total) }
        return timeouts
    }

    /// The next first-byte, stall or total deadline of this transfer.
    func nextDeadline() -> Deadline? {
        let timeouts = effectiveTimeouts
        var deadline = Deadline(instant: startedAt + timeouts.total, kind: .total, limit: timeouts.total)
        var candidate: Deadline?
        if let connectedAt, !firstByteSeen {
            candidate = Deadline(instant: connectedAt + timeouts.firstByte, kind: .firstByte, limit: timeouts.firstByte)
        } else if firstByteSeen, !pausedForReader {
            candidate = Deadline(instant: lastByteAt + timeouts.stall, kind: .stall, limit: timeouts.stall)
        }
        if let candidate, candidate.instant < deadline.instant {
            deadline = candidate
        }
        return deadline
    }

    /// Moves to the next hop after a discarded one (a retry's attempt was taken when it was decided).
    func advance(to next: NextHop) {
        if case .redirect(let target) = next {
            redirectCount += 1
            visited.insert(target.url)
            current = target
        }
    }

    /// Whether `target` was already requested by this fetch.
    func hasVisited(_ target: CurlURL) -> Bool {
        visited.contains(target.url)
    }

    /// Uses up a retry if one is left.
    func takeRetry() -> Bool {
        guard retriesLeft > 0 else { return false }
        retriesLeft -= 1
        return true
    }

    /// curl's message for the last error: the error buffer, or the code's description.
    func errorDetail(_ code: CURLcode) -> String {
        errorBuffer[0] != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
    }

    // MARK: - Options

    /// curl's receive buffer: the largest chunk one write callback delivers.
    package static let receiveBufferBytes = 256 << 10

    private func setStaticOptions(share: UnsafeMutableRawPointer) throws(OriginError) {
        let request = transfer.request
        let timeouts = effectiveTimeouts
        let context = Unmanaged.passUnretained(self).toOpaque()

        try set(CURLOPT_NOSIGNAL, 1)
        // Bigger reads than the default 16 KiB: fewer `recv` calls and callbacks (loopback and fast links give
        // 64-256 KiB per read); the reader is woken once per round of callbacks whatever their size.
        try set(CURLOPT_BUFFERSIZE, EasyTransfer.receiveBufferBytes)
        try set(CURLOPT_PROTOCOLS_STR, string: "http,https")
        try set(CURLOPT_REDIR_PROTOCOLS_STR, string: "http,https")
        try set(CURLOPT_FOLLOWLOCATION, 0)
        try set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        try set(CURLOPT_USERAGENT, string: configuration.userAgent)
        try set(CURLOPT_CONNECTTIMEOUT_MS, timeouts.connect.roundedUpMilliseconds)
        try set(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        // No `CURLOPT_PIPEWAIT`: with it, transfers that start while the first connection to an origin is new wait to
        // learn whether it multiplexes, and libcurl (7.88, and 8.x) wakes them when a transfer ends, not when an HTTP/1.1
        // head arrives. Players' requests to an origin after a long first segment waited for its whole body. Without
        // it, those first transfers open connections of their own; later ones still multiplex on an HTTP/2 connection.
        try set(CURLOPT_TCP_KEEPALIVE, 1)
        try set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        if let caBundle = configuration.caBundle {
            try set(CURLOPT_CAINFO, string: caBundle)
        }
        try check(hlscache_curl_setopt_share(handle, share), CURLOPT_SHARE)
        if request.method == .head {
            try set(CURLOPT_NOBODY, 1)
        }
        if let range = request.range {
            try set(CURLOPT_RANGE, string: range)
        }
        // `identity` unless gzip is welcome; either way libcurl decodes a body an origin encodes anyway (gzip,
        // deflate, br, zstd), and fails the transfer on an encoding it cannot decode, so no encoded byte is ever
        // taken for the object.
        try set(CURLOPT_ACCEPT_ENCODING, string: request.acceptEncoding ? "gzip" : "identity")
        try installCallbacks(context: context)
    }

    func set(_ option: CURLoption, _ value: Int) throws(OriginError) {
        try check(hlscache_curl_setopt_long(handle, option, value), option)
    }

    func set(_ option: CURLoption, string: String) throws(OriginError) {
        try check(hlscache_curl_setopt_str(handle, option, string), option)
    }

    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) throws(OriginError) {
        try check(hlscache_curl_setopt_ptr(handle, option, pointer), option)
    }

    private func set(_ option: CURLoption, list: UnsafeMutablePointer<curl_slist>?) throws(OriginError) {
        try check(hlscache_curl_setopt_slist(handle, option, list), option)
    }

    func check(_ code: CURLcode, _ option: CURLoption) throws(OriginError) {
        guard code == CURLE_OK else {
            let detail = String(cString: curl_easy_strerror(code))
            throw .transferFailed(url: currentURL, detail: "libcurl rejected option \(option.rawValue): \(detail)")
        }
    }
}
