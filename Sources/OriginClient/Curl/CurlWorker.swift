import CCurl
import Synchronization

/// The thread-safe face of the curl worker: a command inbox, the multi handle's wakeup, and the thread.
///
/// One ``WorkerThread`` runs a ``WorkerLoop`` that owns the multi handle and every easy handle.
/// Other threads never touch curl handles; they append a ``Command`` and call
/// `curl_multi_wakeup`, the one multi-handle function that is safe from any thread.
final class CurlWorker: Sendable {
    /// What other threads ask of the worker.
    enum Command: Sendable {
        /// Start a transfer.
        case start(Transfer)
        /// The reader drained the buffer: unpause the transfer.
        case resume(UInt64)
        /// Abort the transfer and free its handle.
        case cancel(UInt64)
    }

    private struct Inbox {
        var commands: [Command] = []
        var closed = false
    }

    /// The multi and share handles; used by the worker thread only, except for `curl_multi_wakeup`.
    struct Handles: @unchecked Sendable {
        let multi: UnsafeMutableRawPointer
        let share: UnsafeMutableRawPointer
    }

    let counters = ClientCounters()
    private let inbox = Mutex(Inbox())
    private let handles: Handles
    private let thread = Mutex<WorkerThread?>(nil)
    private let nextID = Atomic<UInt64>(1)

    /// Creates the multi and share handles and starts the worker thread.
    init(configuration: OriginClientConfiguration) throws(OriginError) {
        try CurlGlobal.initialize()
        guard let multi = curl_multi_init() else {
            throw .invalidConfiguration(reason: "libcurl could not create a multi handle")
        }
        guard let share = curl_share_init() else {
            curl_multi_cleanup(multi)
            throw .invalidConfiguration(reason: "libcurl could not create a share handle")
        }
        // One thread uses the share handle, so it needs no lock callbacks.
        _ = hlscache_curl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_DNS.rawValue))
        _ = hlscache_curl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
        // HTTP/2 multiplexing on TLS origins that offer it.
        _ = hlscache_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        handles = Handles(multi: multi, share: share)

        do {
            let started = try WorkerThread.spawn(name: "hlscache-curl") { [self] in
                WorkerLoop(worker: self, handles: handles, configuration: configuration).run()
            }
            thread.withLock { $0 = started }
        } catch {
            curl_multi_cleanup(multi)
            curl_share_cleanup(share)
            throw error
        }
    }

    /// A new transfer id.
    func makeTransferID() -> UInt64 {
        nextID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Queues a command and wakes the worker; `false` once the worker is shut down.
    @discardableResult
    func submit(_ command: Command) -> Bool {
        inbox.withLock { inbox in
            guard !inbox.closed else { return false }
            inbox.commands.append(command)
            // Under the lock, so that it cannot race with the worker cleaning the multi handle up.
            _ = curl_multi_wakeup(handles.multi)
            return true
        }
    }

    /// Takes the queued commands; called by the worker thread.
    func takeCommands() -> (commands: [Command], closed: Bool) {
        inbox.withLock { inbox in
            defer { inbox.commands.removeAll(keepingCapacity: true) }
            return (inbox.commands, inbox.closed)
        }
    }

    /// Stops the worker: running transfers fail with ``OriginError/Kind/shutDown``; waits for the thread.
    func shutdown() {
        inbox.withLock { inbox in
            guard !inbox.closed else { return }
            inbox.closed = true
            _ = curl_multi_wakeup(handles.multi)
        }
        let joining = thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        joining?.join()
    }
}
