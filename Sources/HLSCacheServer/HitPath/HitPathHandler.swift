import Logging
import NIOCore
import NIOHTTP1
import OriginCache
import SegmentCache

/// Answers fresh cache hits on the connection's event loop, straight after the HTTP/1 decoder: entry files go to
/// the socket with `sendfile` (a NIO `FileRegion`), small hot objects and rewritten playlists from shared buffers,
/// each after a head built for the HTTP/1 encoder (``Answer/responseHead(closing:)``). Every other request
/// goes on, untouched, to the conversion to HTTP types and Hummingbird. ``ConnectionGuard`` installs it and keeps
/// the connection's clocks for the requests it answers.
///
/// Order: a request is answered here only when no earlier request of the connection is still with Hummingbird,
/// so pipelined responses leave in request order. While an answer of ours is being written and the socket is not
/// writable, reads are held (no unbounded queue of answers); a graceful-shutdown quiesce waits for our answers.
final class HitPathHandler: ChannelDuplexHandler, RemovableChannelHandler, ParkingHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// What the parts of the request being read are for.
    private enum Reading {
        /// Between requests.
        case idle
        /// Handed to Hummingbird.
        case forwarding
        /// Answered here: the rest of the request is dropped.
        case answered
        /// Waiting on the event loop for the fill it would join (an LL-HLS blocking reload): answered here when the
        /// fill ends, or handed to Hummingbird then if it is not a hit, or at once if anything else happens first.
        case parked(
            HTTPRequestHead, ExchangeRequest, RequestResolution.ProxiedObject, ended: Bool,
            since: ContinuousClock.Instant)
    }

    private let components: ServerComponents
    private let connection: ConnectionGuard
    /// The connection's ``ConnectionFront``, told of every answer's end written here (each answers a request it handed on).
    private let front: ConnectionFront?
    private var reading = Reading.idle
    /// Requests handed to Hummingbird whose response has not ended.
    private var forwarded = 0
    /// Our answers not yet fully written.
    private var inFlight = AnswersInFlight()
    /// Checks the entry files being sent while they are.
    private let fileWatch = FileSendWatch()
    /// `TCP_CORK` while a head waits for the file region behind it, until the flush.
    private var cork = SocketCork()
    private var heldRead = false
    private var heldQuiesce: Any?
    /// The client's half-close, held while an answer of ours is parked or being written: Hummingbird, seeing it,
    /// would close the connection's output under that answer.
    private var heldInputClosed: Any?
    /// The parked request's numbering and its rendering wait.
    private var parking = ReloadParking()

    /// - Parameters:
    ///   - components: the server's cache and configuration.
    ///   - connection: the connection's guard, told of every answer sent here.
    ///   - front: the connection's ``ConnectionFront``, if it has one.
    init(components: ServerComponents, connection: ConnectionGuard, front: ConnectionFront? = nil) {
        self.components = components
        self.connection = connection
        self.front = front
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let part = unwrapInboundIn(data)
        switch (reading, part) {
        case (.idle, .head(let head)):
            guard forwarded == 0, heldQuiesce == nil, connection.admitsEventLoopAnswer, front?.handsOnPlanned != true,
                let request = ExchangeRequest(head)
            else {
                forward(data, context: context)
                return
            }
            let remembered = Answer.remembered(request, components: components)
            let resolution = remembered.resolution
            if let answer = Answer(hitFor: request, remembered: remembered, components: components) {
                reading = .answered
                connection.eventLoopAnswerStarted(closing: request.closes)
                send(answer, closing: request.closes, context: context)
            } else {
                // A miss, the responder's to fetch; a blocking reload waits here for the fill in flight instead.
                let resolved = Answer.fillToStart(for: request, resolution: resolution)
                if let resolved, Answer.mayPark(request), park(head, request, resolved, context: context) { return }
                forward(data, context: context)
            }
        case (.parked(let head, let request, let resolved, false, let since), .end):
            reading = .parked(head, request, resolved, ended: true, since: since)
        case (.parked, _):
            // Anything more (a pipelined request): the parked one goes to Hummingbird first, to keep the order.
            unpark(context: context)
            channelRead(context: context, data: data)
        case (.answered, .end):
            reading = .idle
        case (.answered, _):
            break
        case (.forwarding, .end):
            reading = .idle
            context.fireChannelRead(data)
        case (.forwarding, _), (.idle, _):
            context.fireChannelRead(data)
        }
    }

    /// Hands a request head to Hummingbird.
    private func forward(_ data: NIOAny, context: ChannelHandlerContext) {
        reading = .forwarding
        forwarded += 1
        context.fireChannelRead(data)
    }

    /// Parks a blocking playlist reload whose fill (of `resolved`'s key) is in flight: it waits here, on the event loop, instead
    /// of in a task of the responder, and is answered by the hit path when the fill ends (a thousand LL-HLS players
    /// asking for the same part cost a thousand hits, not a thousand responder answers). `false`: no fill in flight
    /// (the caller starts one, and those arriving meanwhile park on it).
    private func park(
        _ head: HTTPRequestHead, _ request: ExchangeRequest, _ resolved: RequestResolution.ProxiedObject,
        context: ChannelHandlerContext
    ) -> Bool {
        guard parking.park(resolved.key, for: self, context: context, components: components) else { return false }
        reading = .parked(head, request, resolved, ended: false, since: .now)
        connection.eventLoopAnswerStarted(closing: request.closes)
        components.metrics.parkedRequest()
        return true
    }

    /// The fill a parked request waited for has ended: a hit now is answered here; anything else (the fill failed,
    /// the rendering is not made yet) goes to Hummingbird, which answers it as it answers any request.
    func fillEnded(parking number: Int, batch: WakeBatch, context: ChannelHandlerContext) {
        guard number == parking.number, case .parked(_, let request, let resolved, let ended, let since) = reading
        else { return }
        guard context.channel.isActive else {
            // The player left meanwhile: nothing to answer.
            reading = .idle
            connection.eventLoopAnswerAbandoned()
            return
        }
        let outcome = parking.fillEnded(
            request, resolved: resolved, since: since, batch: batch, for: self, context: context,
            components: components)
        switch outcome {
        case .waiting: return
        case .handOn: unpark(context: context)
        case .answer(let answer):
            reading = ended ? .idle : .answered
            send(answer, closing: request.closes, context: context)
        }
    }

    /// Hands the parked request to Hummingbird, with its end if it came.
    private func unpark(context: ChannelHandlerContext) {
        guard case .parked(let head, _, _, let ended, _) = reading else { return }
        connection.eventLoopAnswerAbandoned()
        forwarded += 1
        reading = ended ? .idle : .forwarding
        context.fireChannelRead(wrapInboundOut(.head(head)))
        if ended { context.fireChannelRead(wrapInboundOut(.end(nil))) }
        // Outside a read (the fill's end), Hummingbird's channel takes reads in only at a read's completion.
        context.fireChannelReadComplete()
        if inFlight.count == 0 { releaseInputClosed(context: context) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            forwarded = max(0, forwarded - 1)
            front?.forwardedAnswerEnded()
        }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        if inFlight.count > 0, !context.channel.isWritable {
            heldRead = true
            return
        }
        context.read()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { releaseRead(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event, inFlight.count > 0 || isParked {
            heldInputClosed = event
            return
        }
        // Shutting down: a parked request is Hummingbird's to answer (or drain).
        if event is ChannelShouldQuiesceEvent { unpark(context: context) }
        if event is ChannelShouldQuiesceEvent, inFlight.count > 0 {
            heldQuiesce = event
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Writes an answer: its head through the HTTP/1 encoder, its body, the end, flushed; finishes its access
    /// record once the last byte is written or the connection fails.
    private func send(_ answer: Answer, closing: Bool, context: ChannelHandlerContext) {
        guard let body = ChannelBody(of: answer) else {
            // `Answer(hitFor:)` plans no stream: the entry's file was cut short under a hit. Its entries go, and the
            // connection ends (the head is not written: the player retries and gets a fresh copy).
            if let url = answer.record.originURL {
                components.logger.warning(
                    "damaged cache entry removed", metadata: ["url": "\(SecretRedaction.redact(url))"])
                _ = components.cache.purge(url: components.origin.keys.identity(of: url))
            }
            connection.eventLoopAnswerAbandoned()
            context.close(promise: nil)
            return
        }
        if case .fileRegion = body.data { cork.on(context.channel) }
        context.write(wrapOutboundOut(.head(answer.responseHead(closing: closing))), promise: nil)
        let written = context.eventLoop.makePromise(of: Void.self)
        if let data = body.data {
            switch data {
            case .byteBuffer(let buffer): context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
            case .fileRegion(let region): context.write(wrapOutboundOut(.body(.fileRegion(region))), promise: nil)
            }
        }
        context.write(wrapOutboundOut(.end(nil)), promise: written)
        front?.forwardedAnswerEnded()
        components.metrics.eventLoopHit(body: answer.bodyKind)
        inFlight.append(answer, body: body, connection: connection)
        if body.isFile {
            fileWatch.start(
                context: context, components: components, damagedFile: { [weak self] in self?.inFlight.damagedFile() },
                isSending: { [weak self] in self?.inFlight.isSendingFile ?? false })
        }
        written.futureResult.assumeIsolated().whenComplete { result in
            guard let answer = self.inFlight.popOldest() else { return }
            answer.finish(result, components: self.components)
            if self.inFlight.count == 0 { self.finishedSending(context: context) }
            answer.tell(self.connection)
        }
        context.flush()
        cork.off(context.channel)
    }

    /// Our last answer is written: release a held read, quiesce and half-close.
    private func finishedSending(context: ChannelHandlerContext) {
        releaseRead(context: context)
        if let event = heldQuiesce {
            heldQuiesce = nil
            context.fireUserInboundEventTriggered(event)
        }
        if !isParked { releaseInputClosed(context: context) }
    }

    private func releaseInputClosed(context: ChannelHandlerContext) {
        guard let event = heldInputClosed else { return }
        heldInputClosed = nil
        context.fireUserInboundEventTriggered(event)
    }

    /// A decoding error: a parked request goes to Hummingbird first, so that the error's answer follows its.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        unpark(context: context)
        context.fireErrorCaught(error)
    }

    private var isParked: Bool {
        if case .parked = reading { return true }
        return false
    }

    private func releaseRead(context: ChannelHandlerContext) {
        guard heldRead else { return }
        heldRead = false
        context.read()
    }
}
