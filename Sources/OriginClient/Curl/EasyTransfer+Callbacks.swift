import CCurl

/// The libcurl callbacks; each runs on the worker thread inside `curl_multi_perform` or `curl_easy_pause`.
extension EasyTransfer {
    /// The redirect statuses that are followed when they carry a `Location`.
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]
    /// The statuses a `GET` is retried on.
    static let retriableStatuses: Set<Int> = [502, 503, 504]

    func installCallbacks(context: UnsafeMutableRawPointer) throws(OriginError) {
        try check(
            hlscache_curl_setopt_write_func(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
                guard let context else { return 0 }
                let easy = Unmanaged<EasyTransfer>.fromOpaque(context).takeUnretainedValue()
                return easy.onBody(UnsafeRawBufferPointer(start: data, count: size * count))
            }, CURLOPT_WRITEFUNCTION)
        try set(CURLOPT_WRITEDATA, pointer: context)

        try check(
            hlscache_curl_setopt_write_func(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
                guard let context else { return 0 }
                let easy = Unmanaged<EasyTransfer>.fromOpaque(context).takeUnretainedValue()
                let line = UnsafeRawBufferPointer(start: data, count: size * count)
                return easy.onHeaderLine(line) ? size * count : 0
            }, CURLOPT_HEADERFUNCTION)
        try set(CURLOPT_HEADERDATA, pointer: context)

        try check(
            hlscache_curl_setopt_opensocket_func(handle) { context, purpose, address in
                guard let context, let address else { return hlscache_CURL_SOCKET_BAD }
                let easy = Unmanaged<EasyTransfer>.fromOpaque(context).takeUnretainedValue()
                return easy.onOpenSocket(purpose: purpose, address: address)
            }, CURLOPT_OPENSOCKETFUNCTION)
        try set(CURLOPT_OPENSOCKETDATA, pointer: context)

        try check(
            hlscache_curl_setopt_prereq_func(handle) { context, primaryIP, _, _, _ in
                guard let context else { return hlscache_CURL_PREREQFUNC_ABORT }
                let easy = Unmanaged<EasyTransfer>.fromOpaque(context).takeUnretainedValue()
                return easy.onConnected(primaryIP: primaryIP.map { String(cString: $0) })
            }, CURLOPT_PREREQFUNCTION)
        try set(CURLOPT_PREREQDATA, pointer: context)
    }

    // MARK: - Address policy

    /// `CURLOPT_OPENSOCKETFUNCTION`: every new connection, after DNS, before any byte is sent.
    private func onOpenSocket(purpose: curlsocktype, address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        guard purpose == CURLSOCKTYPE_IPCXN else { return hlscache_CURL_SOCKET_BAD }
        if configuration.proxy(for: current.host) == nil {
            var bytes = [UInt8](repeating: 0, count: 16)
            let family = hlscache_curl_sockaddr_ip(address, &bytes)
            guard family == 4 || family == 6, let ip = IPAddress(bytes: bytes.prefix(family == 4 ? 4 : 16)) else {
                refusal = .refused(url: currentURL, reason: "\(current.host) resolved to a non-IP address")
                return hlscache_CURL_SOCKET_BAD
            }
            if let reason = configuration.policy.refusalReason(address: ip, host: current.host, port: current.port) {
                refusal = .refused(url: currentURL, reason: reason)
                return hlscache_CURL_SOCKET_BAD
            }
        }
        return hlscache_curl_open_socket(address)
    }

    /// `CURLOPT_PREREQFUNCTION`: a connection (new or reused) is about to carry this hop's request.
    ///
    /// Checks the peer address once more, which also covers reused connections, and starts the
    /// first-byte clock.
    private func onConnected(primaryIP: String?) -> Int32 {
        if configuration.proxy(for: current.host) == nil {
            guard let text = primaryIP, let ip = IPAddress(text) else {
                refusal = .refused(url: currentURL, reason: "the connection's peer address is unknown")
                return hlscache_CURL_PREREQFUNC_ABORT
            }
            if let reason = configuration.policy.refusalReason(address: ip, host: current.host, port: current.port) {
                refusal = .refused(url: currentURL, reason: reason)
                return hlscache_CURL_PREREQFUNC_ABORT
            }
        }
        // Another address of the host may have been refused before this one connected.
        refusal = nil
        connectedAt = .now
        return hlscache_CURL_PREREQFUNC_OK
    }

    // MARK: - Headers

    /// `CURLOPT_HEADERFUNCTION`: one complete header line; `false` aborts the transfer.
    private func onHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        firstByteSeen = true
        lastByteAt = .now
        if case .streaming = phase {
            return true  // trailers
        }
        switch HeaderLine.read(line) {
        case .status:
            responseHeaders = []
        case .end:
            return onEndOfHeaders()
        case .continuation(let text):
            // An obsolete folded continuation line.
            if let last = responseHeaders.popLast() { responseHeaders.append((last.name, last.value + " " + text)) }
        case .field(let name, let value):
            responseHeaders.append((name, value))
        case .other:
            break
        }
        return true
    }

    /// The Content-Length values of a head, when they differ (several fields, or a list in one field); `nil` when
    /// there is at most one value, however often repeated.
    static func conflictingContentLengths(_ headers: [(name: String, value: String)]) -> String? {
        let fields = headers.filter { $0.name == "content-length" }
        // The usual head, one field with one value, is answered without splitting or hashing anything.
        guard fields.count > 1 || fields.contains(where: { $0.value.utf8.contains(UInt8(ascii: ",")) }) else {
            return nil
        }
        let values = fields.flatMap { $0.value.split(separator: ",").map { String($0).trimmingSpaces() } }
        return Set(values).count > 1 ? values.joined(separator: ", ") : nil
    }

    private func responseHeader(_ name: String) -> String? {
        responseHeaders.first { $0.name == name }?.value
    }

    /// The blank line after a header block: decide between redirect, retry and final answer.
    private func onEndOfHeaders() -> Bool {
        guard case .awaitingHeaders = phase else { return true }
        var code = 0
        _ = hlscache_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        if (100..<200).contains(code) {
            return true  // an interim answer; the real one follows
        }
        if Self.redirectStatuses.contains(code), let location = responseHeader("location") {
            return onRedirect(to: location)
        }
        if Self.retriableStatuses.contains(code), takeRetry() {
            phase = .discarding(.retry)
            return true
        }
        return onFinalHead(status: code)
    }

    private func onRedirect(to location: String) -> Bool {
        let limit = configuration.maxRedirects
        guard let target = CurlURL.resolve(location, against: currentURL) else {
            failure = .protocolError(url: currentURL, detail: "redirect to an invalid Location: \(location)")
            return false
        }
        guard target.isHTTP else {
            failure = .refused(url: target.url, reason: "redirect to the \(target.scheme) scheme")
            return false
        }
        guard !hasVisited(target) else {
            failure = .tooManyRedirects(url: target.url, limit: limit, loop: true)
            return false
        }
        guard redirectCount < limit else {
            failure = .tooManyRedirects(url: target.url, limit: limit, loop: false)
            return false
        }
        do {
            try PreparedRequest.checkPolicy(configuration.policy, target: target)
        } catch {
            failure = error
            return false
        }
        phase = .discarding(.redirect(target))
        return true
    }

    private func onFinalHead(status: Int) -> Bool {
        let request = transfer.request
        let encoding = responseHeader("content-encoding")?.lowercased() ?? "identity"
        let decoded = encoding != "identity"
        if let conflict = Self.conflictingContentLengths(responseHeaders) {
            // RFC 9112 §6.3: a message whose Content-Length values differ cannot be framed.
            failure = .protocolError(url: currentURL, detail: "conflicting Content-Length values \(conflict)")
            return false
        }
        var length: curl_off_t = -1
        _ = hlscache_curl_getinfo_off(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        let announced = length >= 0 && !decoded ? Int64(length) : nil
        // HEAD answers, 204 and 304 have no body whatever their Content-Length says.
        let hasBody = request.method == .get && status != 204 && status != 304
        if hasBody, let limit = configuration.maxBodyBytes, let announced, announced > limit {
            failure = .tooLarge(url: currentURL, size: announced, limit: limit)
            return false
        }
        expectedLength = hasBody ? announced : nil
        var headers = responseHeaders
        if decoded {
            headers.removeAll { $0.name == "content-encoding" || $0.name == "content-length" }
        }
        let head = ResponseHead(
            status: status,
            headers: headers,
            effectiveURL: currentURL,
            contentLength: announced,
            redirectCount: redirectCount
        )
        phase = .streaming
        // Handed over now, not at the end of the round: the body that came with the head waits in the buffer.
        guard transfer.receiveHead(head) else {
            failure = .cancelled(url: currentURL)
            return false
        }
        return true
    }

    // MARK: - Body

    /// The minimum-rate check: `nil` while the body streams fast enough; the timeout once a whole window passed
    /// below ``OriginTimeouts/minimumRate``.
    private func slowRate(adding count: Int, now: ContinuousClock.Instant) -> OriginError? {
        let timeouts = effectiveTimeouts
        guard timeouts.minimumRate > 0 else { return nil }
        guard let start = rateWindowStart else {
            rateWindowStart = now
            rateWindowBytes = Int64(count)
            return nil
        }
        rateWindowBytes += Int64(count)
        let elapsed = now - start
        guard elapsed >= timeouts.rateWindow else { return nil }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if Double(rateWindowBytes) / seconds < Double(timeouts.minimumRate) {
            return .timeout(.rate, limit: timeouts.rateWindow, url: currentURL)
        }
        rateWindowStart = now
        rateWindowBytes = 0
        return nil
    }

    /// `CURLOPT_WRITEFUNCTION`: body bytes (decoded when gzip was accepted).
    private func onBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        let now = ContinuousClock.now
        lastByteAt = now
        switch phase {
        case .awaitingHeaders:
            return bytes.count
        case .discarding:
            discardedBytes += bytes.count
            // Past the cap, drop the connection rather than read a large error body to reuse it.
            return discardedBytes <= Self.maxDiscardedBytes ? bytes.count : 0
        case .streaming:
            break
        }
        let total = receivedBytes + Int64(bytes.count)
        if let limit = configuration.maxBodyBytes, total > limit {
            failure = .tooLarge(url: currentURL, size: total, limit: limit)
            return 0
        }
        if let expected = expectedLength, total > expected {
            failure = .bodyTooLong(url: currentURL, received: total, expected: expected)
            return 0
        }
        if let slow = slowRate(adding: bytes.count, now: now) {
            failure = slow
            return 0
        }
        let remaining = expectedLength.map { Int(clamping: $0 - receivedBytes) }
        switch transfer.receiveChunk(bytes, expectedRemaining: remaining) {
        case .accepted:
            receivedBytes = total
            return bytes.count
        case .acceptedForReader:
            receivedBytes = total
            handOvers.add(self)
            return bytes.count
        case .pause:
            pausedForReader = true
            return hlscache_CURL_WRITEFUNC_PAUSE
        case .abort:
            failure = .cancelled(url: currentURL)
            return 0
        }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    fileprivate func trimmingSpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
