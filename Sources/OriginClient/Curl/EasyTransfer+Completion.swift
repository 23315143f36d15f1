import CCurl

/// What happens when curl reports a hop done, and how curl's result codes become ``OriginError``s.
extension EasyTransfer {
    /// Decides, after curl finished a hop (the handle is out of the multi handle), whether another hop
    /// follows or the transfer is over.
    func complete(_ result: CURLcode, now: ContinuousClock.Instant) -> Completion {
        switch phase {
        case .discarding(let next):
            // Whatever ended the discarded body, the next hop is decided already.
            advance(to: next)
            return .nextHop
        case .awaitingHeaders:
            if result == CURLE_OK {
                return .done(.failed(.protocolError(url: currentURL, detail: "no response headers")))
            }
            let error = error(for: result, headDelivered: false, now: now)
            if error.kind == .connectFailure, takeRetry() {
                return .nextHop
            }
            return .done(.failed(error))
        case .streaming:
            guard result == CURLE_OK else {
                return .done(.failed(error(for: result, headDelivered: true, now: now)))
            }
            if let expected = expectedLength, receivedBytes < expected {
                let truncated = OriginError.truncatedBody(
                    url: currentURL,
                    received: receivedBytes,
                    expected: expected,
                    detail: "the transfer ended early"
                )
                return .done(.failed(truncated))
            }
            return .done(.finished)
        }
    }

    /// The error for a failed hop: a callback's decision or refusal first, else curl's code.
    func error(for result: CURLcode, headDelivered: Bool, now: ContinuousClock.Instant) -> OriginError {
        if let failure { return failure }
        if let refusal { return refusal }
        let url = currentURL
        let detail = errorDetail(result)
        switch result {
        case CURLE_COULDNT_RESOLVE_HOST:
            return .dnsFailure(url: url, detail: detail)
        case CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return .connectFailure(url: url, detail: detail)
        case CURLE_OPERATION_TIMEDOUT:
            return timeoutError(now: now)
        case CURLE_PARTIAL_FILE:
            return .truncatedBody(url: url, received: receivedBytes, expected: expectedLength, detail: detail)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2_STREAM, CURLE_HTTP2:
            if headDelivered {
                return .truncatedBody(url: url, received: receivedBytes, expected: expectedLength, detail: detail)
            }
            return result == CURLE_HTTP2 || result == CURLE_HTTP2_STREAM
                ? .protocolError(url: url, detail: detail) : .connectFailure(url: url, detail: detail)
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING, CURLE_UNSUPPORTED_PROTOCOL, CURLE_RANGE_ERROR:
            return .protocolError(url: url, detail: detail)
        case CURLE_URL_MALFORMAT:
            return .invalidRequest(url: url, reason: detail)
        case CURLE_FILESIZE_EXCEEDED:
            return .tooLarge(url: url, size: receivedBytes, limit: configuration.maxBodyBytes ?? 0)
        default:
            if Self.tlsErrors.contains(result.rawValue) {
                return .tlsFailure(url: url, detail: detail)
            }
            return .transferFailed(url: url, detail: detail)
        }
    }

    /// curl reports every timeout as `CURLE_OPERATION_TIMEDOUT`: before the connection it is the connect
    /// timeout, unless the fetch as a whole ran out of time (`CURLOPT_TIMEOUT_MS` is the remaining total).
    private func timeoutError(now: ContinuousClock.Instant) -> OriginError {
        let timeouts = effectiveTimeouts
        if connectedAt == nil, now - startedAt < timeouts.total {
            return .timeout(.connect, limit: timeouts.connect, url: currentURL)
        }
        return .timeout(.total, limit: timeouts.total, url: currentURL)
    }

    /// TLS handshake and certificate errors.
    private static let tlsErrors: Set<CURLcode.RawValue> = [
        CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
        CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
        CURLE_SSL_ENGINE_INITFAILED, CURLE_USE_SSL_FAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE,
        CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT,
    ].map(\.rawValue).reduce(into: []) { $0.insert($1) }
}
