import HTTPTypes
import NIOCore
import RequestHeads
import SegmentCache

/// The one handler that answers an HTTP/1 connection's requests: it reads each request head straight from the bytes
/// (``RequestHeadScanner``), resolves it once (``ResolutionMemo``), routes it
/// (``Answer/route(_:resolution:record:components:)``) and writes its answer as bytes
/// (``Answer/writeHead(closing:chunked:http10:into:)``), with no HTTP/1 encoder:
///
/// - a fresh hit, an error, hlscache's own pages: answered at once (`ConnectionFront+Sending`);
/// - an origin object the cache does not hold fresh (a miss, a fill in flight, an expired entry), a purge: planned on
///   a task that prefers the connection's event loop, and streamed as the fill brings it (`ConnectionFront+Planned`);
/// - an LL-HLS blocking reload whose fill is in flight, with nothing behind it: parked until the fill ends
///   (`ConnectionFront+Parking`).
///
/// Which request is read when, when reads are held, and when a half-close or a graceful-shutdown quiesce goes on are
/// decided by its ``ExchangeMachine``, which has no socket: this handler carries out what it says. It sits behind
/// ``ConnectionGuard``, which installs it.
///
/// What the scanner does not read whole (a body, another method or version, anything unusual) goes, with every byte
/// after it, to NIO's HTTP/1 decoder, which the guard sets up behind the front only then
/// (``ConnectionGuard/installDecoder(front:)``); ``DecodedRequests`` gives each request it reads back to the front
/// (``take(decoded:)``), to be answered the same way. A connection whose requests are all the scanner's never has a
/// decoder.
final class ConnectionFront: ChannelDuplexHandler, RemovableChannelHandler, RoundFlushed, ParkingHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    let components: ServerComponents
    let connection: ConnectionGuard
    /// The connection's exchanges, decided.
    var machine = ExchangeMachine()
    /// Bytes not read yet: the start of a head, or requests waiting for the answers before them.
    private var unread: ByteBuffer?
    /// Our answers not yet fully written.
    var inFlight = AnswersInFlight()
    /// Checks the entry files being sent while they are.
    let fileWatch = FileSendWatch()
    /// The task planning and streaming an answer, cancelled if the connection goes first.
    var planTask: Task<Void, Never>?
    /// Whether ``unread`` is the start of a head (not complete requests waiting).
    private var unreadIsPartialHead = false
    /// Whether the connection's first bytes are still to be told apart from HTTP/2's preface (``HTTP2Preface``), on a
    /// connection that takes it (``ConnectionGuard/acceptsHTTP2Preface``).
    private lazy var awaitsPreface = connection.acceptsHTTP2Preface
    /// Whether a flush is asked for at the end of the event loop's round (``EventLoopFlushes``).
    var flushAsked = false
    /// `TCP_CORK` while a head waits in the channel for the file region behind it, until the flush.
    var cork = SocketCork()
    /// Whether a file answer was queued since the last round's flush began.
    var fileQueued = false
    /// The blocking reload parked here.
    var parked: ParkedRequest?
    /// The parked request's numbering and its rendering wait.
    var parking = ReloadParking()
    /// This connection's `CMSD-Dynamic` line (``cmsdLine(context:)``).
    private var cmsdDynamic = DynamicCMSD<ByteBuffer>()
    /// Whether bytes went on to the decoder since a read's completion last went on.
    private var forwardedSinceReadComplete = false
    /// Who asks for the connection's reads, and when one is held back.
    private let reads = FrontReads()
    /// The requests the decoder read that wait for the answers before them.
    private var decoded = CircularBuffer<DecodedRequest>(initialCapacity: 2)
    /// The front's own place in the pipeline, for the decoder's requests.
    private var context: ChannelHandlerContext?

    /// - Parameters:
    ///   - components: the server's cache and configuration.
    ///   - connection: the connection's guard, told of every answer sent here.
    init(components: ServerComponents, connection: ConnectionGuard) {
        self.components = components
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch machine.reading {
        case .decoder:
            forward(data, context: context)
        case .closing:
            break
        case .front:
            // Anything after a parked request: the parked one is planned first, to keep the order.
            unpark(context: context)
            var bytes = unwrapInboundIn(data)
            if var unread {
                let searchFrom = unreadIsPartialHead ? max(0, unread.readableBytes - 2) : nil
                self.unread = nil
                unread.writeBuffer(&bytes)
                bytes = unread
                // The start of a head is read again only once its end may have come (or it is too long to wait
                // for): a head sent a few bytes at a time costs one search of each byte, not a scan per read.
                if let searchFrom, bytes.readableBytes < RequestHeadScanner.maxHeadLength,
                    !ByteSearch.containsHeadEnd(bytes, from: searchFrom)
                {
                    self.unread = bytes
                    return
                }
            }
            if awaitsPreface {
                switch HTTP2Preface.match(bytes) {
                case .partial:
                    unread = bytes
                    return
                case .whole:
                    awaitsPreface = false
                    connection.switchToHTTP2(with: bytes)
                    return
                case .none:
                    awaitsPreface = false
                }
            }
            readRequests(&bytes, context: context)
        }
    }

    /// Answers each complete request in `bytes`, in order, as the machine lets it; keeps what is left for later.
    /// - Returns: whether bytes went on to the decoder.
    @discardableResult
    private func readRequests(_ bytes: inout ByteBuffer, context: ChannelHandlerContext) -> Bool {
        var answered = false
        let outerLoop = machine.readLoopStarted()
        defer {
            if answered { flushAtEndOfRound(context: context) }
            // Answers that completed during the loop (a flush by a handler behind) left what waited for now.
            if outerLoop, machine.readLoopEnded() { answersDrained(context: context) }
        }
        unreadIsPartialHead = false
        while bytes.readableBytes > 0 {
            switch machine.next(writable: context.channel.isWritable) {
            case .stop:
                return false
            case .wait:
                unread = bytes
                return false
            case .read:
                break
            }
            switch RequestHeadScanner.scan(bytes) {
            case .incomplete:
                unread = bytes
                unreadIsPartialHead = true
                // Its clock is the request head's, even behind an answer started in this read.
                connection.partialHeadWaiting()
                return false
            case .other:
                handOver(bytes, context: context)
                return true
            case .request(let request, let length):
                bytes.moveReaderIndex(forwardBy: length)
                answered = take(request, nothingFollows: bytes.readableBytes == 0, context: context) || answered
            }
        }
        return false
    }

    /// Answers `request`: at once when it can, parked when it waits for a fill with nothing behind it, else planned.
    /// On a connection over the cap, a 503 that closes it; while the server shuts down, each answer closes it.
    /// - Parameter body: the request's body, when the decoder read one.
    /// - Returns: whether an answer was written (flushed at the end of the round).
    private func take(
        _ request: ExchangeRequest, nothingFollows: Bool, body: ByteBuffer? = nil, context: ChannelHandlerContext
    ) -> Bool {
        var request = request
        if machine.quiescing { request.closes = true }
        if connection.overLimit {
            request.closes = true
            return refuse(
                request, .serviceUnavailable, "hlscache is serving its maximum number of connections; try again",
                context: context)
        }
        let remembered = Answer.remembered(request, components: components)
        if request.cmcd != nil { CMCDPrefetch.take(request, remembered: remembered, components: components) }
        if let answer = Answer(hitFor: request, remembered: remembered, components: components),
            let body = ChannelBody(of: answer)
        {
            connection.eventLoopAnswerStarted(closing: request.closes)
            send(answer, body: body, closing: request.closes, http10: request.isHTTP10, context: context)
            return true
        }
        if nothingFollows, park(request, remembered.resolution, context: context) { return false }
        return answer(request, resolution: remembered.resolution, body: body, context: context)
    }

    /// A request the decoder read, whole: answered in its turn, after those before it.
    func take(decoded request: DecodedRequest) {
        decoded.append(request)
        guard let context else { return }
        resumeDecoded(context: context)
    }

    /// Answers the decoder's requests that waited, as the machine lets them go.
    private func resumeDecoded(context: ChannelHandlerContext) {
        var answered = false
        defer { if answered { flushAtEndOfRound(context: context) } }
        while !decoded.isEmpty, machine.next(writable: context.channel.isWritable) == .read {
            let request = decoded.removeFirst()
            switch request.head {
            case .refused(let status, let reason):
                let refused = ExchangeRequest(
                    method: .get, target: "", origin: nil, range: nil, via: nil, accessControlRequestHeaders: nil,
                    readAhead: nil, closes: true)
                answered = refuse(refused, status, reason, context: context) || answered
            case .request(let exchange) where request.bodyTooLarge:
                var closing = exchange
                closing.closes = true
                answered =
                    refuse(
                        closing, .contentTooLarge,
                        "a request body over \(DecodedRequest.maxBodyBytes) bytes: no route of hlscache reads one",
                        context: context) || answered
            case .request(let exchange):
                answered =
                    take(exchange, nothingFollows: decoded.isEmpty, body: request.body, context: context) || answered
            }
        }
    }

    /// Hands `bytes` and everything after them to the decoder, for the rest of the connection.
    private func handOver(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        machine.handedOver()
        forward(wrapInboundOut(bytes), context: context)
    }

    /// Passes `data` on to the decoder (set up first if it is not yet); the read's completion follows it.
    func forward(_ data: NIOAny, context: ChannelHandlerContext) {
        connection.installDecoder(front: self)
        forwardedSinceReadComplete = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if forwardedSinceReadComplete || machine.reading == .decoder { readCompleted(context: context) }
        reads.askForNext(context: context, holding: holdsReads(context))
    }

    /// A read's completion goes on to the handlers behind (a read's, or ours after what we passed on outside one).
    func readCompleted(context: ChannelHandlerContext) {
        forwardedSinceReadComplete = false
        context.fireChannelReadComplete()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        reads.takeOver(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        reads.channelActive(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A plan still waiting for the origin has no one to answer (its fill goes on for the cache).
        planTask?.cancel()
        context.fireChannelInactive()
    }

    /// Whether reads wait (``ExchangeMachine/holdsReads(writable:)``).
    func holdsReads(_ context: ChannelHandlerContext) -> Bool {
        machine.holdsReads(writable: context.channel.isWritable)
    }

    /// Our answers are written, or a plan ended: the requests that waited are read, then what else the machine
    /// releases goes on.
    func answersDrained(context: ChannelHandlerContext) {
        resumeDecoded(context: context)
        resumeUnread(context: context)
        let released = machine.releasedWhenIdle()
        if released.contains(.reads) { reads.release(context: context) }
        if released.contains(.quiesce) { closeIdle(context: context) }
        if released.contains(.inputClosed) { inputClosed(ChannelEvent.inputClosed, context: context) }
    }

    /// The client half-closed and nothing of ours is in progress: the start of a head left unread goes to the
    /// decoder, which the event then tells to read what it holds as the last (a request cut short is refused,
    /// ``DecodedRequests``); once nothing of ours is in progress, the connection closes.
    private func inputClosed(_ event: Any, context: ChannelHandlerContext) {
        if machine.reading == .front, let bytes = unread {
            unread = nil
            machine.handedOver()
            forward(wrapInboundOut(bytes), context: context)
            readCompleted(context: context)
        }
        if connection.hasDecoder { context.fireUserInboundEventTriggered(event) }
        if !machine.isBusy { context.channel.close(promise: nil) }
    }

    /// Closes the connection for a quiesce, now that it is idle: at once (nothing is unread on an idle connection,
    /// so the close resets nothing), unless its last answer closes it, which the guard does after that answer,
    /// draining what the client still sends (``ConnectionGuard/closeAfterAnswers()``).
    private func closeIdle(context: ChannelHandlerContext) {
        guard machine.reading != .closing else { return }
        context.channel.close(promise: nil)
    }

    /// Reads the requests kept while they waited.
    func resumeUnread(context: ChannelHandlerContext) {
        guard var bytes = unread, !unreadIsPartialHead, machine.next(writable: context.channel.isWritable) == .read
        else { return }
        unread = nil
        if readRequests(&bytes, context: context) { readCompleted(context: context) }
    }

    func read(context: ChannelHandlerContext) {
        reads.read(context: context, holding: holdsReads(context))
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            resumeDecoded(context: context)
            resumeUnread(context: context)
            if !holdsReads(context) { reads.release(context: context) }
        }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            // Shutting down: a parked request is planned, as any other in progress, before the quiesce goes on.
            unpark(context: context)
            if machine.quiesce() == .passOn { closeIdle(context: context) }
            return
        }
        if case ChannelEvent.inputClosed = event {
            if machine.inputClosed() { inputClosed(event, context: context) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}

extension ConnectionFront {
    /// The `CMSD-Dynamic` line of an answer written now (``CMSD``, ``DynamicCMSD``); `nil` with `--cmsd off`, or off the
    /// connection's loop.
    func cmsdLine(context: ChannelHandlerContext) -> ByteBuffer? {
        cmsdDynamic.current(on: context.channel, cmsd: components.cmsd) { cmsd, info in
            cmsd.dynamicLine(deliveryRate: info.deliveryRate, roundTrip: info.roundTrip)
        }
    }
}
