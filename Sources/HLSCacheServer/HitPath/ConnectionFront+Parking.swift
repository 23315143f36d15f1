import NIOCore
import RequestHeads
import SegmentCache

/// LL-HLS blocking reloads parked in ``ConnectionFront`` while the fill they would join is in flight.
extension ConnectionFront {
    /// Parks an LL-HLS blocking reload whose fill is in flight, when nothing follows it: it waits here, and its
    /// answer once the fill ends is a hit written like any other. It is planned like a miss (joining the fill, or
    /// whatever the cache holds then) when the fill's end brings no hit, or when anything comes first (more bytes, a
    /// graceful shutdown).
    /// `false`: not such a request, or no fill of it in flight (the caller plans it, and starts the fill).
    func park(
        _ request: ExchangeRequest, _ resolution: RequestResolution, context: ChannelHandlerContext
    ) -> Bool {
        guard let resolved = ReloadParking.waitsFor(request, resolution, components: components),
            parking.park(resolved.key, for: self, context: context, components: components)
        else { return false }
        parked = ParkedRequest(request: request, resolved: resolved, since: .now)
        machine.parkedRequest()
        connection.eventLoopAnswerStarted(closing: request.closes)
        components.metrics.parkedRequest()
        return true
    }

    /// The fill the parked request waited for has ended: a hit is written now, and flushed at once (a client
    /// answered early is better than a burst at the end of the round); anything else is planned.
    func fillEnded(parking number: Int, batch: WakeBatch, context: ChannelHandlerContext) {
        guard number == parking.number, let parked else { return }
        guard context.channel.isActive else {
            // The player left meanwhile: nothing to answer.
            self.parked = nil
            machine.unparked()
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
            // Every hit has a body that can be sent at once; were it not so, it is planned.
            guard let body = ChannelBody(of: answer) else {
                unpark(context: context)
                return
            }
            self.parked = nil
            machine.unparked()
            send(
                answer, body: body, closing: parked.request.closes, http10: parked.request.isHTTP10, context: context)
            context.flush()
            cork.off(context.channel)
        case .handOn:
            unpark(context: context)
        }
    }

    /// Plans the parked request, if any, as any request the front does not answer at once (it joins the fill in
    /// flight, or whatever the cache holds now).
    func unpark(context: ChannelHandlerContext) {
        guard let parked else { return }
        self.parked = nil
        machine.unparked()
        connection.eventLoopAnswerAbandoned()
        let record = Answer.record(of: parked.request, originURL: nil, start: parked.since, components: components)
        let resolved = parked.resolved
        plan(parked.request, context: context) { components in
            await Answer.origin(resolved, record: record, components: components)
        }
    }
}

/// A request parked in a ``ConnectionFront`` (``ConnectionFront/park(_:_:context:)``). A class: every request looks at
/// whether one is parked, and an optional reference is tested without copying what it holds.
final class ParkedRequest {
    /// What the head asks for.
    let request: ExchangeRequest
    /// The origin object whose fill it waits for.
    let resolved: RequestResolution.ProxiedObject
    /// When it arrived.
    let since: ContinuousClock.Instant

    /// A parked request.
    init(request: ExchangeRequest, resolved: RequestResolution.ProxiedObject, since: ContinuousClock.Instant) {
        self.request = request
        self.resolved = resolved
        self.since = since
    }
}
