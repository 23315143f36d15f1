import NIOCore
import NIOHTTP1
import RequestHeads
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
/// installs the connection's ``ConnectionFront`` behind itself, and NIO's HTTP/1 decoder behind the front only when the
/// front hands it the rest of the connection (``installDecoder(front:)``). It hears of every answer's start and end
/// from the front, and so decides when a connection is closed:
///
/// - **Timeouts.** A connection must send a complete request head within ``ConnectionTimeouts/requestHead`` of
///   opening or of the first byte of a request (a slowloris is closed), and may stay idle between requests for
///   ``ConnectionTimeouts/idle``. While an answer is being sent no timer runs, except when the client stops
///   reading: a socket that stays unwritable for ``ConnectionTimeouts/send`` is closed (a player that reads
///   slowly resets that clock with every write that drains).
/// - **Closing answers.** After the answer to a request that asked to close (``ClosingRule``) the connection is
///   closed once the answer is written.
/// - **The connection cap.** Beyond ``ConnectionCounter/limit`` open connections, ``overLimit``: the front answers
///   each request with `503`, and the connection closes.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let counter: ConnectionCounter
    private let timeouts: ConnectionTimeouts
    /// The server's components, for the connection's ``ConnectionFront``.
    private let components: ServerComponents
    /// The guard's own place, first in the pipeline.
    private var context: ChannelHandlerContext?
    /// Whether the HTTP/1 decoder is set up.
    private(set) var hasDecoder = false
    private var counted = false
    /// Whether the connection is over the cap: its requests are refused.
    private(set) var overLimit = false
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
    /// Set once the connection's output is closed after its last answer: what the client still sends is read and
    /// dropped until it closes its side, or ``lingerTime`` has passed (``closeAfterAnswers()``).
    private var lingerTimer: Scheduled<Void>?
    private var lingering = false

    /// How long a connection whose output is closed reads and drops what its client still sends, at most.
    static let lingerTime = TimeAmount.seconds(2)

    /// - Parameters:
    ///   - counter: the server's open-connection count.
    ///   - timeouts: the request-head, idle and send timeouts.
    ///   - components: the server's components, for the connection's front (and its counters).
    ///   - acceptsHTTP2Preface: whether a connection that opens with HTTP/2's preface is served as HTTP/2
    ///     (``switchToHTTP2(with:)``): in cleartext, where it is how a client says it knows (`h2c`); over TLS, ALPN
    ///     decides.
    init(
        counter: ConnectionCounter, timeouts: ConnectionTimeouts, components: ServerComponents,
        acceptsHTTP2Preface: Bool = false
    ) {
        self.counter = counter
        self.timeouts = timeouts
        self.components = components
        self.acceptsHTTP2Preface = acceptsHTTP2Preface
    }

    /// Whether a connection that opens with HTTP/2's preface is served as HTTP/2.
    let acceptsHTTP2Preface: Bool

    /// The connection opened with HTTP/2's preface (`bytes`, with whatever followed it): the front and this guard
    /// leave the pipeline, HTTP/2's handlers (``HTTP2Pipeline``) take it over with those bytes, and reads go back to
    /// `autoRead`. Only the guard's pipeline is cleartext's, with nothing in front of the guard.
    func switchToHTTP2(with bytes: ByteBuffer) {
        guard acceptsHTTP2Preface, !hasDecoder, let context else { return }
        let channel = context.channel
        let operations = channel.pipeline.syncOperations
        do {
            let front = try operations.context(handlerType: ConnectionFront.self)
            operations.removeHandler(context: front, promise: nil)
            operations.removeHandler(context: context, promise: nil)
            try HTTP2Pipeline.install(on: channel, components: components, counter: counter, idle: timeouts.idle)
            try channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
            operations.fireChannelRead(NIOAny(bytes))
        } catch {
            channel.close(promise: nil)
        }
    }

    /// The connection's write-buffer water marks: an answer of up to 256 KiB (a playlist, a segment part, a
    /// 100 KiB segment) goes out without the channel turning unwritable and back, which costs every handler an
    /// event and this guard a send timer, per answer (NIO's 32/64 KiB made
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

    /// Sets up NIO's HTTP/1 decoder behind the front, once, with ``DecodedRequests`` behind it to give the front
    /// what it reads. The front calls it before it hands its first bytes on.
    func installDecoder(front: ConnectionFront) {
        guard !hasDecoder, let context else { return }
        hasDecoder = true
        components.metrics.responderConnection()
        do {
            let operations = context.pipeline.syncOperations
            try operations.addHandler(
                ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)), position: .last)
            try operations.addHandler(DecodedRequests(front: front), position: .last)
        } catch {
            context.channel.close(promise: nil)
        }
    }

    /// The front answers a request: the clocks stop as for any complete head, and the answer takes its place among
    /// the connection's answers (`closing`: the connection closes after it).
    func eventLoopAnswerStarted(closing: Bool) {
        headStarted = false
        deadline = nil
        closeAfter.append(closing)
    }

    /// The front gives up the answer it started last (``eventLoopAnswerStarted(closing:)``): a parked request that is
    /// planned instead (and starts again), or a connection that closes with no answer.
    func eventLoopAnswerAbandoned() {
        if !closeAfter.isEmpty { closeAfter.removeLast() }
    }

    /// The front has written an answer's end: its place is taken now, in the order the ends are written; the front
    /// calls ``eventLoopAnswerWritten(closing:)`` with what this returns once the end is on the wire (or failed), and
    /// the connection closes or the next clock starts then.
    /// - Returns: whether the connection closes after this answer; `nil` when the answer was not counted.
    func eventLoopAnswerEnded() -> Bool? {
        guard !closeAfter.isEmpty, context != nil else { return nil }
        unwrittenEnds += 1
        return closeAfter.removeFirst()
    }

    /// An answer of the front is written (or failed); `closing` is what ``eventLoopAnswerEnded()`` returned.
    func eventLoopAnswerWritten(closing: Bool?) {
        guard let closing, let context else { return }
        answerWritten(closing: closing, context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        deadline = nil
        timer?.task.cancel()
        timer = nil
        sendTimer?.cancel()
        sendTimer = nil
        lingerTimer?.cancel()
        lingerTimer = nil
        if counted {
            counted = false
            counter.open.subtract(1, ordering: .relaxed)
        }
    }

    /// Bytes arrived: the first of a request starts the request-head clock (once earlier answers are written). After
    /// the output is closed, they are dropped.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !lingering else { return }
        if !headStarted {
            headStarted = true
            if closeAfter.isEmpty { arm(timeouts.requestHead, context: context) }
        }
        context.fireChannelRead(data)
    }

    /// The front keeps the start of a request head: its clock is the request head's (an answer started in the same
    /// read stopped it).
    func partialHeadWaiting() {
        headStarted = true
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // Draining: the next read is asked for here (the front asks no more).
        guard !lingering else {
            context.read()
            return
        }
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if lingering, case ChannelEvent.inputClosed = event {
            // The client closed its side: everything it was sent has been read or never will be.
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Closes the connection after its answers without losing them to a reset: a socket closed with input unread
    /// resets the connection, and the client's kernel then drops what it had not yet delivered of the last answer
    /// (a client that pipelined requests after a closing one, or kept sending). So the output is closed first, once
    /// the answers written are on their way; then what the client still sends is read and dropped until it closes its
    /// side (or ``lingerTime`` has passed), and the connection is closed, with nothing unread.
    func closeAfterAnswers() {
        guard let context, !lingering else { return }
        lingering = true
        deadline = nil
        let output = context.eventLoop.makePromise(of: Void.self)
        context.close(mode: .output, promise: output)
        output.futureResult.assumeIsolated().whenComplete { result in
            guard case .success = result, context.channel.isActive else {
                context.close(promise: nil)
                return
            }
            self.lingerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.lingerTime) {
                context.close(promise: nil)
            }
            context.read()
        }
    }

    /// An answer is written: close after it, or, the last one written, start the clock.
    private func answerWritten(closing: Bool, context: ChannelHandlerContext) {
        unwrittenEnds -= 1
        if closing {
            closeAfterAnswers()
        } else if closeAfter.isEmpty, unwrittenEnds == 0 {
            arm(headStarted ? timeouts.requestHead : timeouts.idle, context: context)
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
}
