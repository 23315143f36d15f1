import Synchronization

/// Fetches from HLS origins over libcurl, streaming bodies with backpressure.
///
/// One curl multi handle, driven by one dedicated thread, runs every transfer; connections are
/// reused through curl's connection cache, and DNS answers and TLS sessions are shared.
/// Every connection, on every redirect hop, is checked by the ``AddressPolicy`` after DNS
/// resolution and before any byte is sent.
///
/// ```swift
/// let client = try OriginClient(configuration: .init(policy: AddressPolicy(allowedHosts: ["*.example.com"])))
/// defer { client.shutdown() }
/// let response = try await client.fetch(OriginRequest(url: "https://cdn.example.com/seg1.ts")).checkStatus()
/// for try await chunk in response.body { write(chunk) }
/// ```
///
/// Non-2xx answers are returned as responses with their status; ``OriginResponse/checkStatus()`` throws
/// them as ``OriginError/Kind/httpStatus``. A `GET` is retried once (``OriginClientConfiguration/maxRetries``)
/// on a connection failure or a 502, 503 or 504 answer, always before the response is returned.
public final class OriginClient: OriginFetching, Sendable {
    /// The configuration the client was created with.
    public let configuration: OriginClientConfiguration
    private let worker: CurlWorker

    /// Creates a client and starts its worker thread.
    /// - Parameter configuration: policy, timeouts, limits and transport options.
    /// - Throws: ``OriginError`` of kind ``OriginError/Kind/invalidConfiguration`` when the configuration is
    ///   unusable or libcurl cannot start.
    public init(configuration: OriginClientConfiguration = OriginClientConfiguration()) throws {
        try configuration.validate()
        self.configuration = configuration
        self.worker = try CurlWorker(configuration: configuration)
    }

    deinit {
        worker.shutdown()
    }

    /// Stops the client: transfers in progress fail with ``OriginError/Kind/shutDown``, later fetches too.
    ///
    /// Blocks until the worker thread has ended; calling it again does nothing.
    public func shutdown() {
        worker.shutdown()
    }

    /// Body bytes received from origins and not yet read, over all transfers.
    ///
    /// Bounded by about ``OriginClientConfiguration/maxBufferedBytesPerTransfer`` (plus one write of curl's, at most
    /// its 256 KiB receive buffer) per transfer in progress.
    public var bufferedBytes: Int {
        worker.counters.bufferedBytes.load(ordering: .relaxed)
    }

    /// Transfers holding a curl handle: started and not yet finished, failed or cancelled.
    public var activeTransfers: Int {
        worker.counters.activeTransfers.load(ordering: .relaxed)
    }

    /// Starts a fetch and returns once the final response's status and headers have arrived.
    ///
    /// Cancelling the calling task before then aborts the transfer. Afterwards the transfer belongs
    /// to the returned body: cancelling the task that reads it, or dropping it, aborts it.
    /// - Parameter request: what to fetch.
    /// - Returns: the final response after redirects; 4xx and 5xx included.
    /// - Throws: ``OriginError``.
    public func fetch(_ request: OriginRequest) async throws -> OriginResponse {
        let prepared = try PreparedRequest(request, configuration: configuration)
        let transfer = Transfer(
            id: worker.makeTransferID(),
            request: prepared,
            worker: worker,
            bufferLimit: configuration.maxBufferedBytesPerTransfer
        )
        // Created first, so that whichever way this function leaves, an unwanted transfer is cancelled.
        let lease = TransferLease(transfer)
        let head = try await transfer.awaitHead()
        return OriginResponse(head: head, body: OriginBody(lease: lease))
    }
}
