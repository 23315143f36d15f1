import NIOCore
import Synchronization

/// The server's open connections: to wait for at shutdown, and to close when its grace is over. A connection is open
/// from its accept (``opened(_:)``) until its channel has closed. (Each connection's answers are its own
/// ``ConnectionFront``'s: a planned answer's task ends with its connection.)
final class ConnectionTasks: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var waiters: [CheckedContinuation<Void, Never>] = []
        var cancelled = false
    }

    private let state = Mutex(State())

    /// How many connections are open.
    var count: Int { state.withLock { $0.open.count } }

    /// A connection is accepted: it is open until its channel closes.
    func opened(_ channel: any Channel) {
        let id = ObjectIdentifier(channel)
        let cancelled = state.withLock { state in
            state.open[id] = channel
            return state.cancelled
        }
        if cancelled { channel.close(promise: nil) }
        channel.closeFuture.whenComplete { _ in self.closed(id) }
    }

    /// The channel closed: the last one's close wakes those waiting for all.
    private func closed(_ id: ObjectIdentifier) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard state.open.removeValue(forKey: id) != nil, state.open.isEmpty else { return [] }
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

    /// Closes every connection, and any opened later.
    func cancelAll() {
        let open = state.withLock { state in
            state.cancelled = true
            return Array(state.open.values)
        }
        for channel in open {
            channel.eventLoop.execute {
                // In front of a TLS layer when there is one: the socket closes now, whatever the client reads.
                if let front = try? channel.pipeline.syncOperations.context(handlerType: SocketEnd.self) {
                    front.close(promise: nil)
                } else {
                    channel.close(promise: nil)
                }
            }
        }
    }
}
