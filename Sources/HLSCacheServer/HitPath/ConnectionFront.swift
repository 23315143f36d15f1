import NIOCore
import SegmentCache

/// The front of each HTTP/1 connection: reads its requests straight from the bytes, before the HTTP/1 decoder, and
/// answers the proxied objects it can (fresh hits, misses with nothing behind them, parked LL-HLS reloads); the rest
/// goes on to the decoder and the responder. Fresh hits: the request head is read by
/// ``RequestHeadScanner``, planned by the same ``Answer`` builders as every answer, and its head and body leave as
/// one write of bytes (``Answer/writeHead(closing:chunked:into:)``), with no decoding into HTTP/1 parts, no encoder
/// and no pipeline walk. A miss whose fill it starts, with nothing pipelined behind it, is answered here too
/// (`ConnectionFront+Misses`), as is an LL-HLS blocking reload parked on a fill in flight (`ConnectionFront+Parking`). It sits
/// behind ``ConnectionGuard``, which installs it, and in front of Hummingbird's decoder, which the guard sets up only
/// when the front first hands something on (``ConnectionGuard/installResponder()``): a connection whose requests are
/// all answered here never has one.
///
/// Only a request arriving when the connection is idle (every request it handed on has its answer written) is
/// answered here, so answers leave in request order. Everything else is handed to the decoder as the bytes came:
/// a request that is not answered here (a miss with requests behind it, a stale entry, an error, hlscache's own
/// routes: ``HitPathHandler`` and Hummingbird answer it), whole heads one at a time, so that the decoder holds no
/// partial request when the connection is idle again;
/// and, from the first request the scanner does not read whole (a body, another method or version, anything
/// unusual), every byte for the rest of the connection. While an answer of ours is being written and the socket is
/// not writable, the requests after it wait and reads are held; a half-close and a graceful-shutdown quiesce wait
/// for our answers.
final class ConnectionFront: ChannelDuplexHandler, RemovableChannelHandler, RoundFlushed, ParkingHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    enum Mode {
        /// Requests are read here.
        case reading
        /// The decoder reads every byte from now on.
        case handedOver
        /// An answer of ours closes the connection: nothing more is read.
        case closing
    }

    let components: ServerComponents
    let connection: ConnectionGuard
    var mode = Mode.reading
    /// Bytes not read yet: the start of a head, or requests waiting for the socket to drain.
    private var unread: ByteBuffer?
    /// Requests handed to the decoder whose answer's end has not been written.
    var handedOn = 0
    /// Our answers not yet fully written.
    var inFlight = AnswersInFlight()
    /// Checks the entry files being sent while they are.
    let fileWatch = FileSendWatch()
    /// Whether a miss is being answered here (``takeMiss(_:resolved:context:)``), from the start of its plan until its
    /// end is written: the requests after it wait in ``unread``, and reads, a half-close and a quiesce wait for it.
    var answeringMiss = false
    /// The task planning and streaming that miss, cancelled if the connection goes first.
    var missTask: Task<Void, Never>?
    var heldInputClosed: Any?
    private var heldQuiesce: Any?
    private var quiescing = false
    /// Whether ``unread`` is the start of a head (not complete requests waiting for the socket).
    private var unreadIsPartialHead = false
    /// Whether ``readRequests(_:context:)`` is running (answers may complete inside it).
    private var inReadLoop = false
    /// Whether our last answer completed inside the read loop, which then finishes it.
    private var finishDeferred = false
    /// Whether a flush is asked for at the end of the event loop's round (``EventLoopFlushes``).
    var flushAsked = false
    /// `TCP_CORK` while a head waits in the channel for the file region behind it, until the flush.
    var cork = SocketCork()
    /// Whether a file answer was queued since the last round's flush began.
    var fileQueued = false
    /// The blocking reload parked here, with its head's bytes, for the decoder should it go on after all.
    var parked: ParkedRequest?
    /// The parked request's numbering and its rendering wait.
    var parking = ReloadParking()
    /// Whether the request being handed to the decoder was planned here already: a miss whose fill was started (or
    /// needed none), or a request parked here. ``HitPathHandler`` passes it on to the responder as it is, rather than
    /// look it up, start its fill or park it a second time.
    var handsOnPlanned = false
    /// Whether bytes went on to the decoder since a read's completion last went on: a read whose requests were all
    /// answered here ends here, with no walk of the handlers behind (they were given nothing to complete).
    private var forwardedSinceReadComplete = false
    /// Who asks for the connection's reads, and when one is held back.
    private let reads = FrontReads()

    /// - Parameters:
    ///   - components: the server's cache and configuration.
    ///   - connection: the connection's guard, told of every answer sent here.
    init(components: ServerComponents, connection: ConnectionGuard) {
        self.components = components
        self.connection = connection
    }

    /// The answer to a request handed on has had its end written (by ``HitPathHandler`` or Hummingbird).
    func forwardedAnswerEnded() {
        handedOn = max(0, handedOn - 1)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch mode {
        case .handedOver:
            forward(data, context: context)
        case .closing:
            break
        case .reading:
            // Anything after a parked request: the parked one goes to the decoder first, to keep the order.
            unpark(context: context)
            // A parked request that closes the connection hands the rest of it over.
            guard mode == .reading else {
                if mode == .handedOver { forward(data, context: context) }
                return
            }
            var bytes = unwrapInboundIn(data)
            if var unread {
                let searchFrom = unreadIsPartialHead ? max(0, unread.readableBytes - 3) : nil
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
            readRequests(&bytes, context: context)
        }
    }

    /// Answers or hands on each complete request in `bytes`, in order; keeps what is left for later.
    /// - Returns: whether bytes went on to the decoder.
    @discardableResult
    private func readRequests(_ bytes: inout ByteBuffer, context: ChannelHandlerContext) -> Bool {
        var answered = false
        var handedBytesOn = false
        let outerLoop = !inReadLoop
        inReadLoop = true
        defer {
            if answered { flushAtEndOfRound(context: context) }
            if outerLoop {
                inReadLoop = false
                // An answer that completed during the loop (a flush by the handlers behind) left its held read and
                // events for now, when no request of this read is still in hand.
                if finishDeferred, inFlight.count == 0 {
                    finishDeferred = false
                    finishedSending(context: context)
                }
            }
        }
        unreadIsPartialHead = false
        while bytes.readableBytes > 0, mode == .reading {
            if answeringMiss || (inFlight.count > 0 && !context.channel.isWritable) {
                unread = bytes
                return handedBytesOn
            }
            switch RequestHeadScanner.scan(bytes) {
            case .incomplete:
                unread = bytes
                unreadIsPartialHead = true
                return handedBytesOn
            case .other:
                handOver(bytes, context: context)
                return true
            case .request(let request, let length):
                let remembered = admitsAnswer ? Answer.remembered(request, components: components) : nil
                if let remembered,
                    let answer = Answer(hitFor: request, remembered: remembered, components: components),
                    let body = ChannelBody(of: answer)
                {
                    bytes.moveReaderIndex(forwardBy: length)
                    connection.eventLoopAnswerStarted(closing: request.closes)
                    send(answer, body: body, closing: request.closes, context: context)
                    answered = true
                    if request.closes { mode = .closing }
                } else if let remembered, bytes.readableBytes == length,
                    park(request, remembered.resolution, head: bytes, context: context)
                {
                    bytes.moveReaderIndex(forwardBy: length)
                } else if let remembered, bytes.readableBytes == length,
                    let resolved = Answer.fillToStart(for: request, resolution: remembered.resolution),
                    let verdict = Answer.lookUp(resolved, on: context.eventLoop, components: components)
                {
                    // A miss with nothing behind it, answered here from the cache's verdict: its fill (started now,
                    // or joined) written as it brings the object, with no decoder.
                    bytes.moveReaderIndex(forwardBy: length)
                    takeMiss(request, resolved: resolved, verdict: verdict, context: context)
                } else {
                    // Not answered here: the request goes on planned (``handsOnPlanned``) when it was looked up.
                    handsOnPlanned = remembered != nil
                    defer { handsOnPlanned = false }
                    if request.closes {
                        // The connection ends after this request's answer: the decoder reads the rest, as it would.
                        handedOn += 1
                        handOver(bytes, context: context)
                        return true
                    } else if let head = bytes.readSlice(length: length) {
                        handedOn += 1
                        handedBytesOn = true
                        forward(wrapInboundOut(head), context: context)
                    } else {
                        handOver(bytes, context: context)
                        return true
                    }
                }
            }
        }
        return handedBytesOn
    }

    /// Hands `bytes` and everything after them to the decoder, for the rest of the connection.
    private func handOver(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        mode = .handedOver
        forward(wrapInboundOut(bytes), context: context)
    }

    /// Passes `data` on to the decoder (set up first if it is not yet); the read's completion follows it.
    func forward(_ data: NIOAny, context: ChannelHandlerContext) {
        connection.installResponder()
        forwardedSinceReadComplete = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if forwardedSinceReadComplete || mode == .handedOver { readCompleted(context: context) }
        let shortcut = mode != .handedOver && handedOn == 0 && context.channel.isWritable
        reads.askForNext(context: context, shortcut: shortcut, holding: holdsReads(context))
    }

    /// A read's completion goes on to the handlers behind (a read's, or ours after what we passed on outside one).
    func readCompleted(context: ChannelHandlerContext) {
        forwardedSinceReadComplete = false
        context.fireChannelReadComplete()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        reads.takeOver(context: context)
    }

    func channelActive(context: ChannelHandlerContext) {
        reads.channelActive(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A miss still waiting for the origin has no one to answer (its fill goes on for the cache).
        missTask?.cancel()
        context.fireChannelInactive()
    }

    /// Whether reads wait: our answers are being written and the socket is full, or a miss is being answered.
    func holdsReads(_ context: ChannelHandlerContext) -> Bool {
        answeringMiss || (inFlight.count > 0 && !context.channel.isWritable)
    }

    /// Whether a request may be answered (or parked) here now: the connection is idle and not shutting down.
    private var admitsAnswer: Bool {
        handedOn == 0 && !quiescing && connection.admitsEventLoopAnswer
    }

    /// Our last answer is written: requests waiting for the socket go on, then a held read, quiesce and half-close
    /// (not while requests of a read are in hand: the read's loop calls again when it ends).
    func finishedSending(context: ChannelHandlerContext) {
        guard !inReadLoop else {
            finishDeferred = true
            return
        }
        resumeUnread(context: context)
        guard inFlight.count == 0, !answeringMiss else { return }
        reads.release(context: context)
        if let event = heldQuiesce {
            heldQuiesce = nil
            passOn(event, context: context)
        }
        if parked == nil, let event = heldInputClosed {
            heldInputClosed = nil
            inputClosed(event, context: context)
        }
    }

    /// The client half-closed and no answer of ours is being written: the start of a head left unread goes to the
    /// decoder, to be answered (or refused) as it would be without this handler, and the event follows it.
    func inputClosed(_ event: Any, context: ChannelHandlerContext) {
        if mode == .reading, let bytes = unread {
            unread = nil
            mode = .handedOver
            forward(wrapInboundOut(bytes), context: context)
            readCompleted(context: context)
        }
        passOn(event, context: context)
    }

    /// Passes a quiesce or a half-close on to the responder, once our answers are written. A connection that never
    /// needed the responder is idle now: it closes here, as Hummingbird's handling would close it.
    private func passOn(_ event: Any, context: ChannelHandlerContext) {
        guard connection.hasResponder else {
            context.channel.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Reads the requests kept while the socket was full. Outside a read, what goes on to the decoder is followed by a
    /// read's completion: Hummingbird's channel takes reads in only then.
    func resumeUnread(context: ChannelHandlerContext) {
        guard mode == .reading, !answeringMiss, var bytes = unread, context.channel.isWritable || inFlight.count == 0
        else { return }
        unread = nil
        if readRequests(&bytes, context: context) { readCompleted(context: context) }
    }

    func read(context: ChannelHandlerContext) {
        reads.read(context: context, holding: holdsReads(context))
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            resumeUnread(context: context)
            reads.release(context: context)
        }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent {
            quiescing = true
            // Shutting down: a parked request is the responder's to answer (or drain).
            unpark(context: context)
            if inFlight.count > 0 || answeringMiss {
                heldQuiesce = event
            } else {
                passOn(event, context: context)
            }
            return
        }
        if case ChannelEvent.inputClosed = event {
            if inFlight.count > 0 || parked != nil || answeringMiss {
                heldInputClosed = event
            } else {
                inputClosed(event, context: context)
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
