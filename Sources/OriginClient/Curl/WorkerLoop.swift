import CCurl
import Synchronization

/// The loop on the worker thread: applies commands, drives the multi handle, finishes transfers,
/// enforces the first-byte, stall and total timeouts, and sleeps in `curl_multi_poll` (on curl's descriptors and the
/// worker's wake-up eventfd).
///
/// Everything here runs on its worker thread; nothing here is shared with the client's other workers.
final class WorkerLoop {
    private let worker: CurlWorker
    private let multi: UnsafeMutableRawPointer
    private let share: UnsafeMutableRawPointer
    private let configuration: OriginClientConfiguration
    private var transfers: [UInt64: EasyTransfer] = [:]
    private var byHandle: [UnsafeMutableRawPointer: EasyTransfer] = [:]
    private let handOvers = PendingHandOvers()

    /// The longest sleep in `curl_multi_poll`; curl shortens it for its own timers.
    private static let maxPollMilliseconds = 1000

    init(worker: CurlWorker, handles: CurlWorker.Handles, configuration: OriginClientConfiguration) {
        self.worker = worker
        self.multi = handles.multi
        self.share = handles.share
        self.configuration = configuration
    }

    /// Runs until the worker is shut down, then fails what is left and frees the handles.
    func run() {
        while true {
            let (commands, closed) = worker.takeCommands()
            if closed {
                for case .start(let transfer) in commands {
                    transfer.finish(.failed(.shutDown(url: transfer.request.url)))
                    worker.counters.submittedTransfers.subtract(1, ordering: .relaxed)
                }
                break
            }
            for command in commands {
                apply(command)
            }
            var running: Int32 = 0
            _ = curl_multi_perform(multi, &running)
            readMessages()
            handOvers.handOverAll()
            let now = ContinuousClock.now
            let timeout = enforceDeadlines(now: now)
            _ = hlscache_curl_multi_poll_with(multi, worker.wakeDescriptor, Int32(timeout))
            // Taken before the inbox is read: a command queued after this leaves the eventfd signalled, so the next
            // poll returns at once and no command waits for a timeout.
            hlscache_wake_fd_drain(worker.wakeDescriptor)
        }
        for transfer in Array(transfers.values) {
            finish(transfer, .failed(.shutDown(url: transfer.currentURL)))
        }
        curl_multi_cleanup(multi)
        curl_share_cleanup(share)
    }

    private func apply(_ command: CurlWorker.Command) {
        switch command {
        case .start(let transfer):
            start(transfer)
        case .resume(let id):
            transfers[id]?.resume()
        case .cancel(let id):
            if let easy = transfers[id] {
                finish(easy, .failed(.cancelled(url: easy.currentURL)))
            }
        }
    }

    private func start(_ transfer: Transfer) {
        let easy: EasyTransfer
        do {
            easy = try EasyTransfer(
                transfer: transfer, configuration: configuration, share: share, handOvers: handOvers)
        } catch {
            transfer.finish(.failed(error))
            worker.counters.submittedTransfers.subtract(1, ordering: .relaxed)
            return
        }
        transfers[transfer.id] = easy
        byHandle[easy.handle] = easy
        worker.counters.activeTransfers.add(1, ordering: .relaxed)
        startHop(easy)
    }

    private func startHop(_ easy: EasyTransfer) {
        do {
            try easy.prepareHop(now: .now)
        } catch {
            finish(easy, .failed(error))
            return
        }
        let result = curl_multi_add_handle(multi, easy.handle)
        guard result == CURLM_OK else {
            let detail = String(cString: curl_multi_strerror(result))
            finish(easy, .failed(.transferFailed(url: easy.currentURL, detail: detail)))
            return
        }
        easy.isAdded = true
    }

    private func readMessages() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            // Read before removing the handle: the message does not survive it.
            let result = hlscache_curlmsg_result(message)
            guard let easy = byHandle[handle] else { continue }
            removeFromMulti(easy)
            switch easy.complete(result, now: .now) {
            case .nextHop:
                startHop(easy)
            case .done(let outcome):
                finish(easy, outcome)
            }
        }
    }

    /// Aborts transfers past a deadline; returns how long `curl_multi_poll` may sleep, in milliseconds.
    private func enforceDeadlines(now: ContinuousClock.Instant) -> Int {
        var sleep = Duration.milliseconds(Self.maxPollMilliseconds)
        for easy in Array(transfers.values) {
            guard let deadline = easy.nextDeadline() else { continue }
            if deadline.instant <= now {
                finish(easy, .failed(.timeout(deadline.kind, limit: deadline.limit, url: easy.currentURL)))
            } else {
                sleep = min(sleep, deadline.instant - now)
            }
        }
        return sleep.roundedUpMilliseconds
    }

    private func removeFromMulti(_ easy: EasyTransfer) {
        if easy.isAdded {
            _ = curl_multi_remove_handle(multi, easy.handle)
            easy.isAdded = false
        }
    }

    /// Ends a transfer for good: out of the multi handle, outcome delivered, handle freed.
    private func finish(_ easy: EasyTransfer, _ outcome: TransferStateMachine.Outcome) {
        removeFromMulti(easy)
        easy.transfer.finish(outcome)
        transfers[easy.transfer.id] = nil
        byHandle[easy.handle] = nil
        easy.cleanup()
        // In this order: whoever sees the transfer gone from `activeTransfers` sees it gone from the other too.
        worker.counters.submittedTransfers.subtract(1, ordering: .relaxed)
        worker.counters.activeTransfers.subtract(1, ordering: .releasing)
    }
}

/// The transfers whose waiting reader has bytes buffered in this round of curl's callbacks: woken together when the
/// round is done, one wake per transfer and round instead of one per callback. (A head is handed over at once.)
///
/// Worker thread only.
final class PendingHandOvers {
    private var due: [EasyTransfer] = []

    /// Queues `easy` (once per round) for ``handOverAll()``.
    func add(_ easy: EasyTransfer) {
        guard !easy.handOverQueued else { return }
        easy.handOverQueued = true
        due.append(easy)
    }

    /// Wakes the readers of the queued transfers with their bytes and empties the queue.
    func handOverAll() {
        guard !due.isEmpty else { return }
        let transfers = due
        due.removeAll(keepingCapacity: true)
        for easy in transfers {
            easy.handOverQueued = false
            easy.transfer.handOver()
        }
    }
}
