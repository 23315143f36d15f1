import NIOCore
import Synchronization

/// Stops the server's listeners from accepting past a number of open connections, counted over all of them, and
/// lets them accept again as connections close (the kernel's backlog holds what arrives meanwhile). Each listener
/// has its own handler (``handler(for:)``); a connection's close wakes every listener that stopped, on its own loop.
final class AcceptGate: Sendable {
    private struct State {
        var open = 0
        /// The listeners that stopped reading, each to be asked to read again on its own loop.
        var stopped: [ObjectIdentifier: @Sendable () -> Void] = [:]
    }

    /// The most open connections.
    let limit: Int
    private let state = Mutex(State())

    /// A gate for `limit` connections.
    init(limit: Int) {
        self.limit = limit
    }

    /// A handler for one listener's pipeline, before NIO's accept handler.
    func makeHandler() -> any ChannelHandler {
        Handler(gate: self)
    }

    /// Whether a listener may accept now; when not, `resume` is kept, to be called once it may.
    fileprivate func mayAccept(_ listener: ObjectIdentifier, resume: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            if state.open < limit { return true }
            state.stopped[listener] = resume
            return false
        }
    }

    fileprivate func opened() {
        state.withLock { $0.open += 1 }
    }

    fileprivate func closed() {
        let resumes = state.withLock { state -> [@Sendable () -> Void] in
            state.open -= 1
            guard state.open < limit, !state.stopped.isEmpty else { return [] }
            defer { state.stopped = [:] }
            return Array(state.stopped.values)
        }
        for resume in resumes { resume() }
    }

    /// One listener's side: counts what it accepts, and holds its reads while the gate is shut.
    private final class Handler: ChannelDuplexHandler {
        typealias InboundIn = any Channel
        typealias InboundOut = any Channel
        typealias OutboundIn = Never
        typealias OutboundOut = Never

        let gate: AcceptGate

        init(gate: AcceptGate) {
            self.gate = gate
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let accepted = unwrapInboundIn(data)
            gate.opened()
            accepted.closeFuture.whenComplete { [gate] _ in gate.closed() }
            context.fireChannelRead(data)
        }

        func read(context: ChannelHandlerContext) {
            let loop = context.eventLoop
            let bound = NIOLoopBound(context, eventLoop: loop)
            let resume: @Sendable () -> Void = { loop.execute { bound.value.read() } }
            guard gate.mayAccept(ObjectIdentifier(self), resume: resume) else { return }
            context.read()
        }
    }
}
