import NIOCore
import Synchronization

/// The server's open connections and their responder tasks: to wait for at shutdown, and to end when its grace is
/// over.
///
/// A connection is open from its accept (``opened(_:)``) until its channel has closed and its responder task, if it
/// was given one (``start(for:_:)``: only a connection that needed Hummingbird's responder is), has ended.
final class ConnectionTasks: Sendable {
    private struct Connection {
        var channel: any Channel
        /// Its responder task, once started.
        var task: Task<Void, Never>?
        /// What it waits for before it is closed: its channel's close, and its task's end once one is started.
        var pending = 1
    }

    private struct State {
        var open: [ObjectIdentifier: Connection] = [:]
        var waiters: [CheckedContinuation<Void, Never>] = []
        var cancelled = false
    }

    private let state = Mutex(State())

    /// How many connections are open.
    var count: Int { state.withLock { $0.open.count } }

    /// A connection is accepted: it is open until its channel closes (and its task, if any, ends).
    func opened(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let cancelled = state.withLock { state in
            state.open[id] = Connection(channel: channel)
            return state.cancelled
        }
        if cancelled { channel.close(promise: nil) }
        channel.closeFuture.whenComplete { _ in self.done(id) }
    }

    /// Runs `handle` for `channel` on a task of its own that prefers the channel's loop: started from that loop, its
    /// first job runs there in the same turn, with no thread to wake.
    func start(for channel: any Channel, _ handle: @escaping @Sendable () async -> Void) {
        let id = ObjectIdentifier(channel)
        let task = Task(executorPreference: EventLoopTaskExecutor(channel.eventLoop)) {
            await handle()
            self.done(id)
        }
        let cancelNow = state.withLock { state -> Bool in
            state.open[id]?.task = task
            state.open[id]?.pending += 1
            return state.cancelled
        }
        if cancelNow { task.cancel() }
    }

    /// The channel closed or the task ended: the connection is gone once both have.
    private func done(_ id: ObjectIdentifier) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard var connection = state.open[id] else { return [] }
            connection.pending -= 1
            if connection.pending > 0 {
                state.open[id] = connection
                return []
            }
            state.open[id] = nil
            guard state.open.isEmpty else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once no connection is open.
    func allEnded() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.open.isEmpty { return true }
                state.waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Cancels every responder task and closes every connection without one; the same for any opened later.
    func cancelAll() {
        let open = state.withLock { state in
            state.cancelled = true
            return Array(state.open.values)
        }
        for connection in open {
            if let task = connection.task {
                task.cancel()
            } else {
                connection.channel.close(promise: nil)
            }
        }
    }
}
