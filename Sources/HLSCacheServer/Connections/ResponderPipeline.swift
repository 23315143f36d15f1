import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes

/// Hummingbird's HTTP/1 handling of a connection (its decoder and encoder, the conversion to HTTP types, its
/// connection state and async channel, and the task that runs the responder), set up when the connection first
/// needs it: ``ConnectionGuard/installResponder()``, when ``ConnectionFront`` hands a request on.
///
/// Most player connections never need it: the front answers hits and the misses it starts itself. Setting it up on
/// every accepted connection delayed each new connection's first byte (`bench/PROFILES.md`), and its teardown cost
/// as much again.
struct ResponderPipeline: Sendable {
    /// Hummingbird's HTTP/1 channel: the pipeline's setup and the request loop.
    let child: HTTP1Channel
    /// The logger Hummingbird's channel gets for each connection.
    let logger: Logger
    /// The server's open connections, which keep each one's responder task.
    let connections: ConnectionTasks

    /// Adds Hummingbird's handlers at the end of `channel`'s pipeline, on its loop.
    /// - Returns: the async channel its responder task reads requests from and writes answers to.
    func setUp(on channel: any Channel) throws -> HTTP1Channel.Value {
        // Hummingbird makes its setup's future complete at once (`makeCompletedFuture`): on the channel's loop, a
        // callback on it runs before `whenComplete` returns.
        var result: Result<HTTP1Channel.Value, any Error>?
        child.setup(channel: channel, logger: logger).assumeIsolated().whenComplete { result = $0 }
        guard let result else { throw ResponderSetupPending() }
        return try result.get()
    }

    /// Starts the responder's task for `channel`, set up by ``setUp(on:)``.
    func start(_ value: HTTP1Channel.Value, on channel: any Channel) {
        let child = child
        let logger = logger
        connections.start(for: channel) { await child.handle(value: value, logger: logger) }
    }

    /// Hummingbird's setup did not complete at once: the connection is closed.
    struct ResponderSetupPending: Error {}
}

/// Behind the conversion to HTTP types, once Hummingbird's handling is set up: tells the ``ConnectionGuard`` of each
/// request part read and each answer part written, so that it can close after a closing answer, refuse a `CONNECT`
/// or a connection over the cap, and start the idle clock once the answer is on the wire.
final class AnswerWatcher: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let guardHandler: ConnectionGuard

    /// - Parameter guardHandler: the connection's guard.
    init(guardHandler: ConnectionGuard) {
        self.guardHandler = guardHandler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guardHandler.requestPartRead(unwrapInboundIn(data), data, context: context)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guardHandler.answerPartWritten(unwrapOutboundIn(data), data, promise: promise, context: context)
    }
}
