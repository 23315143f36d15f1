import HTTPTypes
import HummingbirdCore
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

/// The request-head, idle and send timeouts of a connection.
struct ConnectionTimeouts: Sendable {
    /// From a connection's opening, or from the first byte of a request, to its complete head.
    var requestHead: TimeAmount
    /// Between the end of an answer and the first byte of the next request.
    var idle: TimeAmount
    /// How long an answer may make no progress because the client does not read (the socket stays unwritable).
    var send: TimeAmount
}

/// The first of each connection's handlers, installed as it is accepted: it counts the connection, runs its clocks,
/// installs the event-loop front (``ConnectionFront``) behind itself, and sets up Hummingbird's HTTP/1 handling
/// (``ResponderPipeline``) only when a request needs the responder (``installResponder()``). It hears of every
/// answer, the front's and (through ``AnswerWatcher``, behind the conversion to HTTP types) Hummingbird's, and so
/// decides when a connection is closed:
///
/// - **Timeouts.** A connection must send a complete request head within ``ConnectionTimeouts/requestHead`` of
///   opening or of the first byte of a request (a slowloris is closed), and may stay idle between requests for
///   ``ConnectionTimeouts/idle``. While an answer is being sent no timer runs, except when the client stops
///   reading: a socket that stays unwritable for ``ConnectionTimeouts/send`` is closed (a player that reads
///   slowly resets that clock with every write that drains).
/// - **Closing answers.** After the answer to a request that asked to close (`Connection: close`, HTTP/1.0 without
///   keep-alive; ``CloseNormalizer`` makes both explicit) the connection is closed once the answer is written.
/// - **CONNECT** gets a complete `405` once earlier answers are written, and the connection closes: the HTTP parser
///   stops after it, so nothing else could be read from the connection.
/// - **The connection cap.** Beyond ``ConnectionCounter/limit`` open connections, the first request gets `503`
///   and the connection closes.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// A refusal waiting for earlier answers of the connection to be written.
    private struct Refusal {
        var status: HTTPResponse.Status
        var reason: String
    }

    private let counter: ConnectionCounter
    private let timeouts: ConnectionTimeouts
    /// The server's components, for the connection's ``ConnectionFront``.
    private let components: ServerComponents
    /// Hummingbird's handling, set up on demand.
    private let responder: ResponderPipeline
    private let metrics: ServerMetrics
    /// The guard's own place, first in the pipeline.
    private var context: ChannelHandlerContext?
    /// The ``AnswerWatcher``'s place, behind the conversion to HTTP types, once the responder is set up: refusals are
    /// written there.
    private var httpContext: ChannelHandlerContext?
    /// Whether Hummingbird's handling is set up.
    private(set) var hasResponder = false
    private var counted = false
    private var overLimit = false
    /// Set once a refusal is decided: later request parts are dropped.
    private var refusal: Refusal?
    /// Whether the refusal has been written (several answers may finish after the last was written).
    private var refusalSent = false
    /// For each request whose answer has not been written: whether the connection closes after it.
    private var closeAfter: [Bool] = []
    /// Answers whose end has been written but is not on the wire yet (pipelined answers finish one after another):
    /// no idle clock runs until the last is.
    private var unwrittenEnds = 0
    /// Whether bytes of a request head have arrived since the last complete head.
    private var headStarted = false
    /// When the connection closes unless something happens first (a complete head, an answer); `nil`: no clock
    /// runs. Moved on each request without touching the event loop's timers: ``timer`` fires at the deadline it
    /// was scheduled for and, when the deadline moved later meanwhile, schedules itself again for it.
    private var deadline: NIODeadline?
    /// The one scheduled check of ``deadline``, if any, and when it runs.
    private var timer: (task: Scheduled<Void>, due: NIODeadline)?
    private var sendTimer: Scheduled<Void>?

    /// - Parameters:
    ///   - counter: the server's open-connection count.
    ///   - timeouts: the request-head, idle and send timeouts.
    ///   - components: the server's components, for the connection's front.
    ///   - responder: Hummingbird's handling, to set up when a request needs it.
    ///   - metrics: where connections that needed the responder are counted.
    init(
        counter: ConnectionCounter, timeouts: ConnectionTimeouts, components: ServerComponents,
        responder: ResponderPipeline, metrics: ServerMetrics
    ) {
        self.counter = counter
        self.timeouts = timeouts
        self.components = components
        self.responder = responder
        self.metrics = metrics
    }

    /// The connection's write-buffer water marks: an answer of up to 256 KiB (a playlist, a segment part, a
    /// 100 KiB segment) goes out without the channel turning unwritable and back, which costs every handler an
    /// event, the responder's writer a lock and this guard a send timer, per answer (NIO's 32/64 KiB made
    /// 100 KiB hits measurably slower). A streamed answer holds at most this much more before it waits.
    static let writeBufferWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 128 << 10, high: 256 << 10)

    /// Counts the connection, starts the request-head clock, sets the write-buffer water marks, and installs
    /// ``ConnectionFront`` behind itself.
    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        counted = true
        overLimit = counter.open.add(1, ordering: .relaxed).newValue > counter.limit
        try? context.channel.syncOptions?.setOption(
            ChannelOptions.writeBufferWaterMark, value: Self.writeBufferWaterMark)
        do {
            try context.pipeline.syncOperations.addHandler(
                ConnectionFront(components: components, connection: self), position: .last)
        } catch {
            context.channel.close(promise: nil)
        }
        arm(timeouts.requestHead, context: context)
    }

    /// Sets up Hummingbird's handling behind the front, once (``ResponderPipeline``): its HTTP/1 decoder and encoder,
    /// ``CloseNormalizer`` after the decoder, ``AnswerWatcher`` after the conversion to HTTP
    /// types, and the responder's task. The front calls it before it hands anything on.
    func installResponder() {
        guard !hasResponder, let context else { return }
        hasResponder = true
        metrics.responderConnection()
        do {
            let channel = context.channel
            let value = try responder.setUp(on: channel)
            let operations = context.pipeline.syncOperations
            let state = try operations.handler(type: HTTPConnectionStateHandler.self)
            try operations.addHandler(AnswerWatcher(guardHandler: self), position: .before(state))
            let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try operations.addHandler(CloseNormalizer(), position: .after(decoder))
            responder.start(value, on: channel)
        } catch {
            context.channel.close(promise: nil)
        }
    }

    /// Whether the hit path may answer the request just read: not while the connection is being refused.
    var admitsEventLoopAnswer: Bool { refusal == nil && !overLimit }

    /// The hit path answers a request: the clocks stop as for any complete head, and the answer takes its place
    /// among the connection's answers (a refusal waits for it; `closing`: the connection closes after it).
    func eventLoopAnswerStarted(closing: Bool) {
        headStarted = false
        deadline = nil
        closeAfter.append(closing)
    }

    /// The hit path hands a request it had taken (``eventLoopAnswerStarted(closing:)``) to Hummingbird after all:
    /// its place goes, since the request now passes here.
    func eventLoopAnswerAbandoned() {
        if !closeAfter.isEmpty { closeAfter.removeLast() }
    }

    /// The hit path has written its answer's end. As for Hummingbird's answers, its place is taken now, in the order
    /// the ends are written; the hit path calls ``eventLoopAnswerWritten(closing:)`` with what this returns once the
    /// end is on the wire (or failed), and the connection closes or the next clock starts then.
    /// - Returns: whether the connection closes after this answer; `nil` when the answer was not counted.
    func eventLoopAnswerEnded() -> Bool? {
        guard !closeAfter.isEmpty, context != nil else { return nil }
        unwrittenEnds += 1
        return closeAfter.removeFirst()
    }

    /// An answer of the hit path is written (or failed); `closing` is what ``eventLoopAnswerEnded()`` returned.
    func eventLoopAnswerWritten(closing: Bool?) {
        guard let closing, let context else { return }
        answerWritten(closing: closing, context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        httpContext = nil
        deadline = nil
        timer?.task.cancel()
        timer = nil
        sendTimer?.cancel()
        sendTimer = nil
        if counted {
            counted = false
            counter.open.subtract(1, ordering: .relaxed)
        }
    }

    /// Bytes arrived: the first of a request starts the request-head clock (once earlier answers are written).
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if !headStarted, refusal == nil {
            headStarted = true
            if closeAfter.isEmpty { arm(timeouts.requestHead, context: context) }
        }
        context.fireChannelRead(data)
    }

    /// A request part has been decoded for the responder (``AnswerWatcher``'s `context`): a head stops the clocks
    /// and takes its place among the connection's answers, or is refused.
    func requestPartRead(_ part: HTTPRequestPart, _ data: NIOAny, context: ChannelHandlerContext) {
        httpContext = context
        guard refusal == nil else { return }
        guard case .head(let head) = part else {
            context.fireChannelRead(data)
            return
        }
        headStarted = false
        deadline = nil
        if overLimit {
            refuse(.serviceUnavailable, "hlscache is serving its maximum number of connections; try again", context)
        } else if head.method == .connect {
            refuse(.methodNotAllowed, "CONNECT is not supported: only GET and HEAD are proxied", context)
        } else {
            closeAfter.append(head.headerFields[.connection]?.lowercased() == "close")
            context.fireChannelRead(data)
        }
    }

    /// The responder writes an answer's part (``AnswerWatcher``'s `context`): once an end is on the wire, the
    /// connection closes or the next clock starts.
    func answerPartWritten(
        _ part: HTTPResponsePart, _ data: NIOAny, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext
    ) {
        guard case .end = part, !closeAfter.isEmpty, let own = self.context else {
            context.write(data, promise: promise)
            return
        }
        let closing = closeAfter.removeFirst()
        unwrittenEnds += 1
        let written = promise ?? context.eventLoop.makePromise(of: Void.self)
        context.write(data, promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in
            self.answerWritten(closing: closing, context: own)
        }
    }

    /// An answer is written: close after it, or, the last one written, send a waiting refusal or start the clock.
    private func answerWritten(closing: Bool, context: ChannelHandlerContext) {
        unwrittenEnds -= 1
        if closing {
            context.channel.close(promise: nil)
        } else if closeAfter.isEmpty, unwrittenEnds == 0 {
            if let refusal {
                guard !refusalSent, let httpContext else { return }
                refusalSent = true
                send(refusal, httpContext)
            } else {
                arm(headStarted ? timeouts.requestHead : timeouts.idle, context: context)
            }
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            sendTimer?.cancel()
            sendTimer = nil
        } else if sendTimer == nil {
            sendTimer = context.eventLoop.assumeIsolated().scheduleTask(in: timeouts.send) {
                if !context.channel.isWritable { context.channel.close(promise: nil) }
            }
        }
        context.fireChannelWritabilityChanged()
    }

    /// Starts the clock: the connection closes `timeout` from now unless it is moved or stopped first.
    private func arm(_ timeout: TimeAmount, context: ChannelHandlerContext) {
        let due = NIODeadline.now() + timeout
        deadline = due
        // A check scheduled for no later than `due` finds the new deadline and schedules itself again; one
        // scheduled later would close late, so it gives way.
        if let timer, timer.due <= due { return }
        timer?.task.cancel()
        schedule(at: due, context: context)
    }

    private func schedule(at due: NIODeadline, context: ChannelHandlerContext) {
        let task = context.eventLoop.assumeIsolated().scheduleTask(deadline: due) {
            self.timer = nil
            guard let deadline = self.deadline else { return }
            if deadline > NIODeadline.now() {
                self.schedule(at: deadline, context: context)
            } else if self.closeAfter.isEmpty, self.unwrittenEnds == 0 {
                context.channel.close(promise: nil)
            }
        }
        timer = (task, due)
    }

    /// Refuses the request with a one-line error and `Connection: close` once earlier answers are written, drops
    /// the rest of what the connection sends, and closes it after the refusal.
    private func refuse(_ status: HTTPResponse.Status, _ reason: String, _ context: ChannelHandlerContext) {
        let refusal = Refusal(status: status, reason: reason)
        self.refusal = refusal
        if closeAfter.isEmpty {
            refusalSent = true
            send(refusal, context)
        }
    }

    private func send(_ refusal: Refusal, _ context: ChannelHandlerContext) {
        let body = context.channel.allocator.buffer(string: refusal.reason + "\n")
        var fields = HTTPFields()
        fields[.contentType] = "text/plain; charset=utf-8"
        fields[.contentLength] = String(body.readableBytes)
        fields[.connection] = "close"
        fields[.cacheControl] = "no-store"
        if refusal.status == .serviceUnavailable { fields[.retryAfter] = "1" }
        if refusal.status == .methodNotAllowed { fields[.allow] = "GET, HEAD, OPTIONS" }
        let head = HTTPResponse(status: refusal.status, headerFields: fields)
        context.write(NIOAny(HTTPResponsePart.head(head)), promise: nil)
        context.write(NIOAny(HTTPResponsePart.body(body)), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(NIOAny(HTTPResponsePart.end(nil)), promise: written)
        written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
