import NIOCore
import SegmentCache

/// LL-HLS blocking reloads parked in ``ConnectionFront``, before the decoder, while the fill they would join is in flight.
extension ConnectionFront {
    /// Parks an LL-HLS blocking reload whose fill is in flight, when nothing follows it: it waits here, before the
    /// decoder, and its answer once the fill ends is a hit written as bytes like any other of ours. It goes on to the
    /// decoder when the fill's end brings no hit, or when anything comes first (more bytes, a graceful shutdown).
    /// `false`: not such a request, or no fill of it in flight (the decoder's side starts one).
    func park(
        _ request: ExchangeRequest, _ resolution: RequestResolution, head: ByteBuffer, context: ChannelHandlerContext
    ) -> Bool {
        guard let resolved = Answer.fillToStart(for: request, resolution: resolution), Answer.mayPark(request),
            parking.park(resolved.key, for: self, context: context, components: components)
        else { return false }
        parked = ParkedRequest(head: head, request: request, resolved: resolved, since: .now)
        connection.eventLoopAnswerStarted(closing: request.closes)
        components.metrics.parkedRequest()
        return true
    }

    /// The fill the parked request waited for has ended: a hit is written now, and flushed at once (a client
    /// answered early is better than a burst at the end of the round); anything else goes to the decoder.
    func fillEnded(parking number: Int, batch: WakeBatch, context: ChannelHandlerContext) {
        guard number == parking.number, let parked else { return }
        guard context.channel.isActive else {
            // The player left meanwhile: nothing to answer.
            self.parked = nil
            connection.eventLoopAnswerAbandoned()
            return
        }
        let outcome = parking.fillEnded(
            parked.request, resolved: parked.resolved, since: parked.since, batch: batch, for: self, context: context,
            components: components)
        switch outcome {
        case .waiting:
            return
        case .answer(let answer):
            // Every hit has a body that can be sent at once; were it not so, the responder would answer.
            guard let body = ChannelBody(of: answer) else {
                unpark(context: context)
                return
            }
            self.parked = nil
            send(answer, body: body, closing: parked.request.closes, context: context)
            if parked.request.closes { mode = .closing }
            context.flush()
            cork.off(context.channel)
        case .handOn:
            unpark(context: context)
        }
    }

    /// Hands the parked request, if any, to the decoder: the responder answers it as any request it is given.
    func unpark(context: ChannelHandlerContext) {
        guard let parked else { return }
        self.parked = nil
        connection.eventLoopAnswerAbandoned()
        handedOn += 1
        if parked.request.closes { mode = .handedOver }
        handsOnPlanned = true
        forward(wrapInboundOut(parked.head), context: context)
        handsOnPlanned = false
        // Outside a read (the fill's end), Hummingbird's channel takes reads in only at a read's completion.
        readCompleted(context: context)
        if inFlight.count == 0, let event = heldInputClosed {
            heldInputClosed = nil
            inputClosed(event, context: context)
        }
    }
}

/// A request parked in a ``ConnectionFront`` (``ConnectionFront/park(_:_:head:context:)``), with its head's bytes, for the decoder
/// should it go on after all. A class: every request looks at whether one is parked, and an optional reference is
/// tested without copying what it holds.
final class ParkedRequest {
    /// The request head's bytes.
    let head: ByteBuffer
    /// What the head asks for.
    let request: ExchangeRequest
    /// The origin object whose fill it waits for.
    let resolved: RequestResolution.ProxiedObject
    /// When it arrived.
    let since: ContinuousClock.Instant

    /// A parked request.
    init(
        head: ByteBuffer, request: ExchangeRequest, resolved: RequestResolution.ProxiedObject,
        since: ContinuousClock.Instant
    ) {
        self.head = head
        self.request = request
        self.resolved = resolved
        self.since = since
    }
}
