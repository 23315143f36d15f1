import CCurl
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The thread-safe face of the curl worker: a command inbox, the multi handle's wakeup, and the thread.
///
/// One ``WorkerThread`` runs a ``WorkerLoop`` that owns the multi handle and every easy handle.
/// Other threads never touch curl handles; they append a ``Command`` and signal the worker's eventfd, which its
/// `curl_multi_poll` waits on with curl's own descriptors. The signal is sent after the inbox's lock is released
/// (the worker, woken, takes that lock next), and the eventfd lives as long as this object, so a late signal after
/// shutdown is harmless. (An eventfd wake-up, unlike curl's socket pair, also leaves the scheduler free to run the
/// worker on an idle core.)
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

    /// The multi and share handles; used by the worker thread only.
    struct Handles: @unchecked Sendable {
        let multi: UnsafeMutableRawPointer
        let share: UnsafeMutableRawPointer
    }

    let counters = ClientCounters()
    /// The eventfd the worker's poll waits on besides curl's descriptors: signalled when a command is queued.
    let wakeDescriptor: Int32
    private let inbox = Mutex(Inbox())
    private let thread = Mutex<WorkerThread?>(nil)
    private let nextID = Atomic<UInt64>(1)

    /// Creates the multi and share handles and starts the worker thread.
    /// - Parameters:
    ///   - configuration: the client's configuration.
    ///   - name: the thread's name (at most 15 bytes are kept).
    init(configuration: OriginClientConfiguration, name: String) throws(OriginError) {
        try CurlGlobal.initialize()
        let wake = hlscache_wake_fd_open()
        guard wake >= 0 else {
            throw .invalidConfiguration(reason: "no eventfd for the origin client's thread (errno \(errno))")
        }
        guard let multi = curl_multi_init() else {
            close(wake)
            throw .invalidConfiguration(reason: "libcurl could not create a multi handle")
        }
        guard let share = curl_share_init() else {
            curl_multi_cleanup(multi)
            close(wake)
            throw .invalidConfiguration(reason: "libcurl could not create a share handle")
        }
        wakeDescriptor = wake
        // One thread uses the share handle, so it needs no lock callbacks.
        _ = hlscache_curl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_DNS.rawValue))
        _ = hlscache_curl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue))
        // HTTP/2 multiplexing on TLS origins that offer it.
        _ = hlscache_curl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        let handles = Handles(multi: multi, share: share)

        do {
            let started = try WorkerThread.spawn(name: name) { [self, handles] in
                WorkerLoop(worker: self, handles: handles, configuration: configuration).run()
            }
            thread.withLock { $0 = started }
        } catch {
            curl_multi_cleanup(multi)
            curl_share_cleanup(share)
            close(wake)
            throw error
        }
    }

    deinit {
        close(wakeDescriptor)
    }

    /// A new transfer id.
    func makeTransferID() -> UInt64 {
        nextID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Binds the worker's thread to `processor`; `false` when the kernel refuses or the worker has stopped.
    func bind(to processor: Int) -> Bool {
        thread.withLock { thread in
            guard let thread else { return false }
            do {
                try thread.bind(to: processor)
                return true
            } catch {
                return false
            }
        }
    }

    /// Queues a command and wakes the worker; `false` once the worker is shut down.
    @discardableResult
    func submit(_ command: Command) -> Bool {
        let queued = inbox.withLock { inbox in
            guard !inbox.closed else { return false }
            inbox.commands.append(command)
            if case .start = command { counters.submittedTransfers.add(1, ordering: .relaxed) }
            return true
        }
        if queued { hlscache_wake_fd_signal(wakeDescriptor) }
        return queued
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
        let closing = inbox.withLock { inbox in
            defer { inbox.closed = true }
            return !inbox.closed
        }
        if closing { hlscache_wake_fd_signal(wakeDescriptor) }
        let joining = thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        joining?.join()
    }
}
