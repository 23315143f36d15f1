import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One fetch, shared between the worker thread that runs it and the tasks that await its head and body.
///
/// The protocol lives in ``TransferStateMachine``; this class holds it behind a `Mutex`, resumes
/// continuations outside the lock, keeps the client's buffered-bytes counter, and sends the worker
/// resume and cancel commands.
final class Transfer: Sendable {
    /// Unique within its worker (the one it is submitted to); names the transfer in that worker's commands.
    let id: UInt64
    /// What to fetch, validated.
    let request: PreparedRequest
    private let state: Mutex<TransferStateMachine>
    private let worker: CurlWorker

    init(id: UInt64, request: PreparedRequest, worker: CurlWorker, bufferLimit: Int) {
        self.id = id
        self.request = request
        self.worker = worker
        self.state = Mutex(TransferStateMachine(limit: bufferLimit, url: request.url))
    }

    private var cancelledError: OriginError { .cancelled(url: request.url) }

    // MARK: - Fetching and consuming tasks

    /// Starts the transfer and waits for the final hop's head.
    func awaitHead() async throws -> ResponseHead {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: TransferStateMachine.HeadContinuation) in
                let action = state.withLock { $0.waitForHead(continuation, cancelled: cancelledError) }
                switch action {
                case .start:
                    if !worker.submit(.start(self)) {
                        fail(.shutDown(url: request.url))
                    }
                case .fail(let continuation, let error):
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// The next body chunk, `nil` at the end.
    func nextChunk() async throws -> [UInt8]? {
        if Task.isCancelled {
            cancel()
            throw cancelledError
        }
        if let value = try complete(state.withLock { $0.pollChunk() }) {
            return value
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: TransferStateMachine.ChunkContinuation) in
                let action = state.withLock { $0.waitForChunk(continuation) }
                do {
                    if let value = try complete(action) {
                        continuation.resume(returning: value)
                    }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Performs a poll action: `.some(chunk)`, `.some(nil)` at the end, or `nil` when the reader must wait.
    private func complete(_ action: TransferStateMachine.PollAction) throws -> [UInt8]?? {
        switch action {
        case .chunk(let chunk, let requestResume):
            worker.counters.bufferedBytes.subtract(chunk.count, ordering: .relaxed)
            if requestResume {
                _ = worker.submit(.resume(id))
            }
            return .some(chunk)
        case .end:
            return .some(nil)
        case .fail(let error):
            throw error
        case .wait:
            return nil
        }
    }

    /// Cancels the transfer: fails whoever waits and tells the worker to abort and free the handle.
    func cancel() {
        fail(cancelledError)
    }

    private func fail(_ error: OriginError) {
        switch state.withLock({ $0.cancel(error) }) {
        case .none:
            break
        case .failHead(let continuation, let error, let droppedBytes, let abortWorker):
            worker.counters.bufferedBytes.subtract(droppedBytes, ordering: .relaxed)
            continuation.resume(throwing: error)
            if abortWorker { _ = worker.submit(.cancel(id)) }
        case .failBody(let waiter, let error, let droppedBytes, let abortWorker):
            worker.counters.bufferedBytes.subtract(droppedBytes, ordering: .relaxed)
            waiter?.resume(throwing: error)
            if abortWorker { _ = worker.submit(.cancel(id)) }
        }
    }

    // MARK: - Worker thread

    /// Hands the final head to the fetching task at once, which answers its requester while curl takes in the body
    /// that came with it (on another core when there is one); `false` when nobody wants it any more.
    func receiveHead(_ head: ResponseHead) -> Bool {
        switch state.withLock({ $0.receiveHead(head) }) {
        case .deliver(let continuation, let head):
            continuation.resume(returning: head)
            // The core goes to the fetching task first when it is woken on this one (its event loop bound with this
            // thread to one processor): the head is answered before curl takes in the body.
            sched_yield()
            return true
        case .abort: return false
        }
    }

    /// What the write callback should do with a chunk.
    enum ChunkVerdict {
        case accepted
        /// Accepted for a reader that waits: call ``handOver()`` once the round of callbacks is done.
        case acceptedForReader
        case pause
        case abort
    }

    /// Offers body bytes to the consumer.
    /// - Parameters:
    ///   - bytes: the bytes curl wrote.
    ///   - expectedRemaining: how many bytes are still to come, these included, when known.
    func receiveChunk(_ bytes: UnsafeRawBufferPointer, expectedRemaining: Int?) -> ChunkVerdict {
        switch state.withLock({ $0.receiveChunk(bytes, expectedRemaining: expectedRemaining) }) {
        case .buffered(let count):
            worker.counters.bufferedBytes.add(count, ordering: .relaxed)
            return .accepted
        case .bufferedForReader(let count):
            worker.counters.bufferedBytes.add(count, ordering: .relaxed)
            return .acceptedForReader
        case .pause:
            return .pause
        case .abort:
            return .abort
        }
    }

    /// Wakes the reader that waits with the bytes buffered for it, if both are there; called by the worker after its
    /// round of callbacks.
    func handOver() {
        switch state.withLock({ $0.handOver() }) {
        case .none:
            break
        case .chunk(let continuation, let chunk, let requestResume):
            worker.counters.bufferedBytes.subtract(chunk.count, ordering: .relaxed)
            if requestResume { _ = worker.submit(.resume(id)) }
            continuation.resume(returning: chunk)
        }
    }

    /// Called right before `curl_easy_pause(CURLPAUSE_CONT)`; `false` when nobody wants the body any more.
    func prepareResume() -> Bool {
        state.withLock { $0.prepareResume() }
    }

    /// The worker is done with the transfer.
    func finish(_ outcome: TransferStateMachine.Outcome) {
        switch state.withLock({ $0.finish(outcome) }) {
        case .none:
            break
        case .failHead(let continuation, let error):
            continuation.resume(throwing: error)
        case .endBody(let continuation, .finished):
            continuation.resume(returning: nil)
        case .endBody(let continuation, .failed(let error)):
            continuation.resume(throwing: error)
        case .handOver(let continuation, let chunk):
            worker.counters.bufferedBytes.subtract(chunk.count, ordering: .relaxed)
            continuation.resume(returning: chunk)
        }
    }
}
