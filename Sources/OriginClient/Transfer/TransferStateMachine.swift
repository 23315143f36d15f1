/// The state of one fetch as both sides see it: the worker thread producing the head and body
/// chunks, and the tasks awaiting the head and consuming the body.
///
/// Every method is called under the owning ``Transfer``'s lock and returns an action for the
/// caller to perform after releasing it (resuming a continuation, pausing or resuming curl).
/// Body bytes are gathered into chunks of up to `chunkCapacity` bytes and buffered up to `limit` bytes; past that
/// the worker is told to pause (`CURL_WRITEFUNC_PAUSE`, curl keeps the bytes and offers them again after the
/// resume), and the consumer asks for a resume once it has drained the buffer to half the limit.
///
/// Bytes for a reader that waits are not handed over from inside curl's write callbacks: the worker hands them over
/// with ``handOver()`` once its round of callbacks is done, so that a reader wakes once per round with all of the
/// round's bytes, not once per write callback. The head goes to the fetching task as soon as it is complete
/// (``receiveHead(_:)``): the task answers its requester while curl takes in the body that came with the head, which
/// waits in the buffer.
struct TransferStateMachine {
    typealias HeadContinuation = CheckedContinuation<ResponseHead, any Error>
    typealias ChunkContinuation = CheckedContinuation<[UInt8]?, any Error>

    /// How the worker ended the transfer.
    enum Outcome {
        /// The body ended as announced.
        case finished
        /// The transfer failed; the error is thrown after any buffered chunks.
        case failed(OriginError)
    }

    private enum State {
        /// Created; nobody waits for the head yet and the worker has not been asked to start.
        case idle
        /// The fetching task waits for the head; the worker runs the transfer.
        case awaitingHead(HeadContinuation)
        /// The head was handed over; the body flows.
        case streaming
        /// Nothing more will be delivered: `nil` after a clean end, else the error to report.
        case closed(OriginError?)
    }

    private struct Body {
        var chunks: [[UInt8]] = []
        var bufferedBytes = 0
        var waiter: ChunkContinuation?
        var end: Outcome?
        var paused = false
        var resumeRequested = false
    }

    /// The most bytes buffered before the worker is paused (one chunk may go past it when the buffer is empty).
    let limit: Int
    /// The most bytes gathered into one chunk (one chunk written in one piece may be larger).
    let chunkCapacity: Int
    /// The requested URL, for errors the machine makes itself.
    let url: String
    private var state: State = .idle
    /// The body while ``State/streaming`` (kept beside the state, not in it, so that it changes in place).
    private var body = Body()
    /// Whether the worker has finished with this transfer (so cancelling need not tell it).
    private var workerFinished = false

    init(limit: Int, url: String, chunkCapacity: Int = 256 * 1024) {
        self.limit = max(1, limit)
        self.chunkCapacity = max(1, chunkCapacity)
        self.url = url
    }

    /// Bytes currently buffered, waiting for the consumer.
    var bufferedBytes: Int {
        switch state {
        case .streaming: return body.bufferedBytes
        case .idle, .awaitingHead, .closed: return 0
        }
    }

    // MARK: - Fetching task

    enum StartAction {
        /// Ask the worker to start the transfer.
        case start
        /// Already cancelled: fail the continuation.
        case fail(HeadContinuation, OriginError)
    }

    /// The fetching task starts waiting for the head.
    mutating func waitForHead(_ continuation: HeadContinuation, cancelled: OriginError) -> StartAction {
        switch state {
        case .idle:
            state = .awaitingHead(continuation)
            return .start
        case .closed(let error):
            return .fail(continuation, error ?? cancelled)
        case .awaitingHead, .streaming:
            preconditionFailure("waitForHead called twice")
        }
    }

    enum CancelAction {
        case none
        /// Fail the head continuation, release `droppedBytes`, and tell the worker to abort when `abortWorker`.
        case failHead(HeadContinuation, OriginError, droppedBytes: Int, abortWorker: Bool)
        /// Fail the waiting consumer if any, release `droppedBytes`, and tell the worker when `abortWorker`.
        case failBody(ChunkContinuation?, OriginError, droppedBytes: Int, abortWorker: Bool)
    }

    /// The fetching or consuming task was cancelled, or the body was dropped.
    mutating func cancel(_ error: OriginError) -> CancelAction {
        switch state {
        case .idle:
            state = .closed(error)
            return .none
        case .awaitingHead(let continuation):
            state = .closed(error)
            return .failHead(continuation, error, droppedBytes: 0, abortWorker: !workerFinished)
        case .streaming:
            state = .closed(error)
            let waiter = body.waiter
            let dropped = body.bufferedBytes
            body = Body()
            return .failBody(waiter, error, droppedBytes: dropped, abortWorker: !workerFinished)
        case .closed:
            return .none
        }
    }

    // MARK: - Consumer

    enum PollAction {
        /// A buffered chunk; `requestResume` asks the worker to unpause curl.
        case chunk([UInt8], requestResume: Bool)
        /// The body ended cleanly.
        case end
        /// The body failed.
        case fail(OriginError)
        /// Nothing buffered yet.
        case wait
    }

    /// The consumer asks for the next chunk without waiting.
    mutating func pollChunk() -> PollAction {
        switch state {
        case .streaming:
            if !body.chunks.isEmpty {
                let (chunk, resume) = takeChunk()
                return .chunk(chunk, requestResume: resume)
            }
            switch body.end {
            case .none:
                return .wait
            case .finished:
                state = .closed(nil)
                body = Body()
                return .end
            case .failed(let error):
                state = .closed(error)
                body = Body()
                return .fail(error)
            }
        case .closed(let error):
            return error.map(PollAction.fail) ?? .end
        case .idle, .awaitingHead:
            preconditionFailure("body read before the head was delivered")
        }
    }

    /// The consumer waits for the next chunk: `.wait` means the continuation was stored.
    ///
    /// The body has one reader: a second task waiting at the same time gets an error instead.
    mutating func waitForChunk(_ continuation: ChunkContinuation) -> PollAction {
        let action = pollChunk()
        if case .wait = action, case .streaming = state {
            guard body.waiter == nil else {
                return .fail(.invalidRequest(url: url, reason: "the body is read by two tasks at once"))
            }
            body.waiter = continuation
        }
        return action
    }

    // MARK: - Worker

    enum HeadAction {
        /// Resume the fetching task with the head; the body flows from now on.
        case deliver(HeadContinuation, ResponseHead)
        /// Nobody wants the response any more: abort the transfer.
        case abort
    }

    /// The worker has the final hop's head.
    mutating func receiveHead(_ head: ResponseHead) -> HeadAction {
        switch state {
        case .awaitingHead(let continuation):
            state = .streaming
            body = Body()
            return .deliver(continuation, head)
        case .idle, .streaming, .closed:
            return .abort
        }
    }

    /// Takes the first buffered chunk; returns it and whether taking it should unpause curl.
    private mutating func takeChunk() -> ([UInt8], requestResume: Bool) {
        let chunk = body.chunks.removeFirst()
        body.bufferedBytes -= chunk.count
        let resume = body.paused && !body.resumeRequested && body.bufferedBytes <= limit / 2
        if resume { body.resumeRequested = true }
        return (chunk, resume)
    }

    enum ChunkAction {
        /// Buffered; nobody waits for it.
        case buffered(Int)
        /// Buffered for the reader that waits: the worker calls ``handOver()`` once its round of callbacks is done.
        case bufferedForReader(Int)
        /// Buffer full: return `CURL_WRITEFUNC_PAUSE`; curl offers the same bytes again after a resume.
        case pause
        /// Nobody wants the body any more: abort the transfer.
        case abort
    }

    /// The worker has body bytes: they are copied into the last chunk when it has room, else into a new one.
    /// - Parameters:
    ///   - bytes: the bytes curl wrote.
    ///   - expectedRemaining: how many bytes are still to come, these included, when known: a new chunk reserves
    ///     no more room than that.
    mutating func receiveChunk(_ bytes: UnsafeRawBufferPointer, expectedRemaining: Int? = nil) -> ChunkAction {
        switch state {
        case .streaming: break
        case .idle, .awaitingHead, .closed: return .abort
        }
        if body.bufferedBytes > 0, body.bufferedBytes + bytes.count > limit {
            body.paused = true
            body.resumeRequested = false
            return .pause
        }
        let last = body.chunks.count - 1
        if last >= 0, body.chunks[last].count + bytes.count <= chunkCapacity {
            body.chunks[last].append(contentsOf: bytes)
        } else {
            var chunk: [UInt8] = []
            chunk.reserveCapacity(max(bytes.count, min(chunkCapacity, expectedRemaining ?? chunkCapacity)))
            chunk.append(contentsOf: bytes)
            body.chunks.append(chunk)
        }
        body.bufferedBytes += bytes.count
        return body.waiter != nil ? .bufferedForReader(bytes.count) : .buffered(bytes.count)
    }

    enum HandOverAction {
        /// Resume the reader that waits with the first buffered chunk; unpause curl when `requestResume`.
        case chunk(ChunkContinuation, [UInt8], requestResume: Bool)
    }

    /// The worker has finished a round of callbacks: the first buffered chunk for the reader that waits, if both are
    /// there.
    mutating func handOver() -> HandOverAction? {
        guard case .streaming = state, let waiter = body.waiter, !body.chunks.isEmpty else { return nil }
        body.waiter = nil
        let (chunk, resume) = takeChunk()
        return .chunk(waiter, chunk, requestResume: resume)
    }

    /// The worker is about to unpause curl; returns whether the transfer is still wanted.
    mutating func prepareResume() -> Bool {
        switch state {
        case .streaming: break
        case .idle, .awaitingHead, .closed: return false
        }
        body.paused = false
        body.resumeRequested = false
        return true
    }

    enum FinishAction {
        case none
        case failHead(HeadContinuation, OriginError)
        case endBody(ChunkContinuation, Outcome)
        /// The reader waits and bytes were still to be handed over: they go first, the end is kept for later.
        case handOver(ChunkContinuation, [UInt8])
    }

    /// The worker is done with the transfer, for good.
    mutating func finish(_ outcome: Outcome) -> FinishAction {
        workerFinished = true
        switch state {
        case .idle:
            if case .failed(let error) = outcome { state = .closed(error) }
            return .none
        case .awaitingHead(let continuation):
            var error = OriginError.protocolError(url: url, detail: "the transfer ended without a response")
            if case .failed(let failure) = outcome { error = failure }
            state = .closed(error)
            return .failHead(continuation, error)
        case .streaming:
            if let waiter = body.waiter, !body.chunks.isEmpty {
                body.waiter = nil
                body.end = outcome
                let (chunk, _) = takeChunk()
                return .handOver(waiter, chunk)
            }
            if let waiter = body.waiter {
                switch outcome {
                case .finished: state = .closed(nil)
                case .failed(let error): state = .closed(error)
                }
                body = Body()
                return .endBody(waiter, outcome)
            }
            body.end = outcome
            return .none
        case .closed:
            return .none
        }
    }
}
