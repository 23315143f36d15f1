import Synchronization

/// Fetches from HLS origins over libcurl, streaming bodies with backpressure.
///
/// ``OriginClientConfiguration/workerThreads`` curl multi handles, each driven by a dedicated thread, run the
/// transfers; a transfer goes to the thread with the fewest. Each thread reuses connections through its curl
/// connection cache and shares DNS answers and TLS sessions among its transfers.
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
    /// The processor each worker thread is bound to (``OriginClientConfiguration/workerProcessors``), by the
    /// thread's number; `nil` for a thread not bound, or whose binding the kernel refused.
    public let boundWorkerProcessors: [Int?]
    private let workers: [CurlWorker]
    /// Where the next search for the least busy worker starts, so that ties go round.
    private let rotation = Atomic<UInt>(0)
    /// How many more transfers than the least busy worker a thread's home worker may have and still be given a new
    /// one (``setHomeWorker(_:)``): past that, the work is spread instead.
    static let homeWorkerSlack = 4

    /// Creates a client and starts its worker threads.
    /// - Parameter configuration: policy, timeouts, limits and transport options.
    /// - Throws: ``OriginError`` of kind ``OriginError/Kind/invalidConfiguration`` when the configuration is
    ///   unusable or libcurl cannot start.
    public init(configuration: OriginClientConfiguration = OriginClientConfiguration()) throws {
        try configuration.validate()
        self.configuration = configuration
        var started: [CurlWorker] = []
        do {
            for index in 0..<configuration.workerThreads {
                let name = "\(configuration.threadName)\(index)"
                started.append(try CurlWorker(configuration: configuration, name: name))
            }
        } catch {
            for worker in started { worker.shutdown() }
            throw error
        }
        self.workers = started
        boundWorkerProcessors = started.indices.map { index in
            guard index < configuration.workerProcessors.count else { return nil }
            let processor = configuration.workerProcessors[index]
            return started[index].bind(to: processor) ? processor : nil
        }
    }

    /// Makes worker `index` (modulo each client's worker count) the one that fetches started on the calling thread
    /// go to, in every client of the process, unless it has more than ``homeWorkerSlack`` transfers more than the
    /// least busy worker; `nil` clears it (the least busy worker, ties going round).
    ///
    /// A server binds each event loop and the worker of the same number to one processor, and makes that worker the
    /// loop's home: a fetch the loop starts then wakes no thread on another core, and neither does its answer.
    public static func setHomeWorker(_ index: Int?) {
        HomeWorker.set(index)
    }

    /// The calling thread's home worker (``setHomeWorker(_:)``), if it has one.
    public static var homeWorker: Int? { HomeWorker.current }

    deinit {
        for worker in workers { worker.shutdown() }
    }

    /// Stops the client: transfers in progress fail with ``OriginError/Kind/shutDown``, later fetches too.
    ///
    /// Blocks until the worker threads have ended; calling it again does nothing.
    public func shutdown() {
        for worker in workers { worker.shutdown() }
    }

    /// Body bytes received from origins and not yet read, over all transfers.
    ///
    /// Bounded by about ``OriginClientConfiguration/maxBufferedBytesPerTransfer`` (plus one write of curl's, at most
    /// its 256 KiB receive buffer) per transfer in progress.
    public var bufferedBytes: Int {
        workers.reduce(0) { $0 + $1.counters.bufferedBytes.load(ordering: .relaxed) }
    }

    /// Transfers holding a curl handle: started and not yet finished, failed or cancelled.
    public var activeTransfers: Int {
        workers.reduce(0) { $0 + $1.counters.activeTransfers.load(ordering: .relaxed) }
    }

    /// Transfers holding a curl handle, per worker thread, in the threads' order.
    package var activeTransfersPerWorker: [Int] {
        workers.map { $0.counters.activeTransfers.load(ordering: .acquiring) }
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
        let worker = chosenWorker()
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

    /// The calling thread's home worker (``setHomeWorker(_:)``) unless it is more than ``homeWorkerSlack``
    /// transfers busier than the least busy; otherwise the worker with the fewest transfers submitted and not yet
    /// finished, ties going round.
    private func chosenWorker() -> CurlWorker {
        guard workers.count > 1 else { return workers[0] }
        let start = Int(rotation.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(workers.count))
        var best = workers[start]
        var bestLoad = best.counters.submittedTransfers.load(ordering: .relaxed)
        for offset in 1..<workers.count {
            let candidate = workers[(start + offset) % workers.count]
            let load = candidate.counters.submittedTransfers.load(ordering: .relaxed)
            if load < bestLoad { (best, bestLoad) = (candidate, load) }
        }
        guard let index = HomeWorker.current else { return best }
        let home = workers[index % workers.count]
        let homeLoad = home.counters.submittedTransfers.load(ordering: .relaxed)
        return homeLoad <= bestLoad + Self.homeWorkerSlack ? home : best
    }
}
