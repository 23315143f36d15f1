import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import Synchronization

/// How many connections are open, across the server: shared by every connection's ``ConnectionGuard``.
final class ConnectionCounter: Sendable {
    /// Connections open now.
    let open = Atomic<Int>(0)
    /// Above this many, a new connection's first request is refused with 503 and the connection closed.
    let limit: Int

    /// - Parameter limit: the most connections served at once.
    init(limit: Int) {
        self.limit = limit
    }
}

/// The first of hlscache's handlers in each connection's HTTP/1 pipeline: it sees every request part and every
/// response part (Hummingbird's and the hit path's), and so decides when a connection is closed:
///
/// - **Timeouts.** A connection must send a complete request head within ``ConnectionTimeouts/requestHead`` of
///   opening or of the first byte of a request (a slowloris is closed), and may stay idle between requests for
///   ``ConnectionTimeouts/idle``; while a request is being answered no timer runs.
/// - **Closing answers.** After the answer to a request that asked to close (`Connection: close`, HTTP/1.0 without
///   keep-alive; ``CloseNormalizer`` makes both explicit) the connection is closed once the answer is written.
/// - **CONNECT** (and requests that ask to upgrade the protocol) get a complete `405` and the connection closes:
///   the HTTP parser stops parsing after them, so nothing else could be read from the connection.
/// - **The connection cap.** Beyond ``ConnectionCounter/limit`` open connections, the first request gets `503`
///   and the connection closes.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let counter: ConnectionCounter
    private let timeouts: ConnectionTimeouts
    private var counted = false
    private var overLimit = false
    /// Whether this connection's requests are being dropped after a refusal.
    private var refusing = false
    /// For each request whose answer has not been written: whether the connection closes after it.
    private var closeAfter: [Bool] = []
    /// Whether bytes of a request head have arrived since the last complete head.
    private var headStarted = false
    private var timer: Scheduled<Void>?

    /// - Parameters:
    ///   - counter: the server's open-connection count.
    ///   - timeouts: the request-head and idle timeouts.
    init(counter: ConnectionCounter, timeouts: ConnectionTimeouts) {
        self.counter = counter
        self.timeouts = timeouts
    }

    func handlerAdded(context: ChannelHandlerContext) {
        counted = true
        overLimit = counter.open.add(1, ordering: .relaxed).newValue > counter.limit
        let operations = context.pipeline.syncOperations
        try? operations.addHandler(FirstByteWatcher(guardHandler: self), position: .first)
        if let decoder = try? operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self) {
            try? operations.addHandler(CloseNormalizer(), position: .after(decoder))
        }
        arm(timeouts.requestHead, context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        if counted {
            counted = false
            counter.open.subtract(1, ordering: .relaxed)
        }
    }

    /// Bytes arrived: the first after an answer starts the request-head clock.
    fileprivate func bytesArrived(context: ChannelHandlerContext) {
        guard !headStarted, closeAfter.isEmpty, !refusing else { return }
        headStarted = true
        arm(timeouts.requestHead, context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        guard !refusing else { return }
        guard case .head(let head) = part else {
            context.fireChannelRead(data)
            return
        }
        headStarted = false
        timer?.cancel()
        timer = nil
        if overLimit {
            refuse(.serviceUnavailable, "hlscache is serving its maximum number of connections; try again", context)
        } else if head.method == .connect || head.headerFields[.upgrade] != nil {
            refuse(.methodNotAllowed, "\(head.method) is not supported: only GET and HEAD are proxied", context)
        } else {
            closeAfter.append(head.headerFields[.connection]?.lowercased() == "close")
            context.fireChannelRead(data)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data), !closeAfter.isEmpty else {
            context.write(data, promise: promise)
            return
        }
        let closing = closeAfter.removeFirst()
        let written = promise ?? context.eventLoop.makePromise(of: Void.self)
        context.write(data, promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in
            if closing {
                context.close(promise: nil)
            } else if self.closeAfter.isEmpty {
                self.arm(self.timeouts.idle, context: context)
            }
        }
    }

    private func arm(_ timeout: TimeAmount, context: ChannelHandlerContext) {
        timer?.cancel()
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            if self.closeAfter.isEmpty { context.close(promise: nil) }
        }
    }

    /// Answers the request with a one-line error and `Connection: close`, drops the rest of what the connection
    /// sends, and closes it once the answer is written.
    private func refuse(_ status: HTTPResponse.Status, _ reason: String, _ context: ChannelHandlerContext) {
        refusing = true
        let body = context.channel.allocator.buffer(string: reason + "\n")
        var fields = HTTPFields()
        fields[.contentType] = "text/plain; charset=utf-8"
        fields[.contentLength] = String(body.readableBytes)
        fields[.connection] = "close"
        fields[.cacheControl] = "no-store"
        if status == .serviceUnavailable { fields[.retryAfter] = "1" }
        if status == .methodNotAllowed { fields[.allow] = "GET, HEAD" }
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

/// The request-head and idle timeouts of a connection.
struct ConnectionTimeouts: Sendable {
    /// From a connection's opening, or from the first byte of a request, to its complete head.
    var requestHead: TimeAmount
    /// Between the end of an answer and the first byte of the next request.
    var idle: TimeAmount
}

/// At the front of the pipeline: tells the ``ConnectionGuard`` when bytes arrive, before any decoding.
private final class FirstByteWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let guardHandler: ConnectionGuard

    init(guardHandler: ConnectionGuard) {
        self.guardHandler = guardHandler
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guardHandler.bytesArrived(context: context)
        context.fireChannelRead(data)
    }
}
