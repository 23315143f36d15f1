import NIOCore
import OriginCache
import RequestHeads
import SegmentCache

/// How a connection parks LL-HLS blocking playlist reloads on its event loop, one at a time, while the fill they
/// would join is in flight: ``ConnectionFront`` parks them. Each
/// parking is numbered, so that the end of a fill an earlier one waited for wakes no later one; when the fill ends,
/// ``fillEnded(_:resolved:since:batch:for:context:components:)`` says what the parked request gets.
struct ReloadParking {
    /// What a parked request gets when the fill it waited for has ended.
    enum Outcome {
        /// A hit: the handler sends it.
        case answer(Answer)
        /// Its playlist is published but not rendered yet: it waits once more, to be woken by the same `wake`.
        case waiting
        /// Anything else (the fill failed, the rendering did not come in time): it is planned as any other request.
        case handOn
    }

    /// The number of the latest parking.
    private(set) var number = 0
    /// Whether the parked request already waits for its playlist's rendering (after its fill ended).
    private var awaitingRendering = false

    /// How long a parked request whose playlist is published waits for its rendering to be kept before it goes to
    /// the plan. The leader's plan renders it within milliseconds, unless the machine is busy; handed on, the
    /// parked requests would find a blocking reload's short freshness gone and ask the origin again. Two seconds is
    /// what a loaded 2-core machine needed (200 ms did not always do, nor 1 s once the suite grew).
    static let renderingPatienceMilliseconds: Int64 = 2000

    /// The origin object whose fill `request` (resolved to `resolution`) would wait for, parked: an LL-HLS blocking
    /// reload (``Answer/mayPark(_:)``) of an origin object whose fill it would start or join (with the player's CMCD
    /// when `--cmcd-to-origin` passes it on); `nil` for any other request.
    static func waitsFor(
        _ request: ExchangeRequest, _ resolution: RequestResolution, components: ServerComponents
    ) -> RequestResolution.ProxiedObject? {
        // A view's blocking reload is planned: its answer is its own rendering, not the one wake-ups share.
        guard case .origin(let object) = resolution, object.view == nil, Answer.mayPark(request) else { return nil }
        return Answer.fillToStart(for: request, resolved: object.passingCMCD(of: request, components: components))
    }

    /// Parks a request of `handler`'s on the fill of `key`: when the fill ends, `handler`'s
    /// ``ParkingHandler/fillEnded(parking:batch:context:)`` runs on its event loop with this parking's number.
    /// - Returns: `false`, and nothing parked, when no fill of `key` is in flight (the caller starts one, and those
    ///   arriving meanwhile park on it).
    mutating func park(
        _ key: CacheKey, for handler: any ParkingHandler, context: ChannelHandlerContext, components: ServerComponents
    ) -> Bool {
        let next = number + 1
        let wake = Self.wake(handler, parking: next, context: context, components: components)
        guard components.cache.whenFillEnds(key, wake) else { return false }
        number = next
        awaitingRendering = false
        return true
    }

    /// What the parked `request` (resolved to `resolved`, arrived at `since`) gets now that its fill ended; on
    /// `handler`'s event loop.
    mutating func fillEnded(
        _ request: ExchangeRequest, resolved: RequestResolution.ProxiedObject, since: ContinuousClock.Instant,
        batch: WakeBatch, for handler: any ParkingHandler, context: ChannelHandlerContext,
        components: ServerComponents
    ) -> Outcome {
        func hit() -> Answer? {
            var answer = Answer(
                hitFor: request, resolved: resolved, components: components, canSendFile: true, arrivedAt: since,
                batch: batch)
            answer?.noteHeld(since: since)
            return answer
        }
        if let answer = hit() { return .answer(answer) }
        guard !awaitingRendering else { return .handOn }
        let wake = Self.wake(handler, parking: number, context: context, components: components)
        if awaitRendering(of: resolved.key, components: components, eventLoop: context.eventLoop, wake: wake) {
            return .waiting
        }
        // Nothing to wait for, or the rendering was kept just now.
        return hit().map(Outcome.answer) ?? .handOn
    }

    /// What wakes parking `number` of `handler` (from any thread): its ``ParkingHandler/fillEnded(parking:batch:context:)``
    /// on its event loop, in the loop's next batch of wake-ups.
    private static func wake(
        _ handler: any ParkingHandler, parking number: Int, context: ChannelHandlerContext,
        components: ServerComponents
    ) -> @Sendable () -> Void {
        let bound = NIOLoopBound((handler, context), eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        let wakeUps = components.wakeUps
        return {
            wakeUps.schedule(on: eventLoop) { batch in
                bound.value.0.fillEnded(parking: number, batch: batch, context: bound.value.1)
            }
        }
    }

    /// Keeps a parked request waiting once more when its playlist is published but not rendered yet (the request
    /// that started the fill is rendering it): it is woken when the rendering is kept, or after
    /// ``renderingPatienceMilliseconds``. `false`: nothing to wait for.
    private mutating func awaitRendering(
        of key: CacheKey, components: ServerComponents, eventLoop: any EventLoop, wake: @escaping @Sendable () -> Void
    ) -> Bool {
        guard let fetchedAt = Answer.pendingRendering(of: key, components: components) else { return false }
        awaitingRendering = true
        guard
            components.memory.playlists.whenKept(
                key, fetchedAt: fetchedAt, patience: .milliseconds(Self.renderingPatienceMilliseconds), wake)
        else {
            // Kept meanwhile.
            wake()
            return true
        }
        eventLoop.scheduleTask(in: .milliseconds(Self.renderingPatienceMilliseconds), wake)
        return true
    }
}

/// What parks requests with ``ReloadParking``: an HTTP/1 connection's front, an HTTP/2 stream's exchange.
protocol ParkingHandler: AnyObject {
    /// The fill parking `number` waited for has ended (or its rendering was kept, or its patience ran out); on the
    /// handler's event loop. A number other than the latest parking's is stale: nothing to do.
    func fillEnded(parking number: Int, batch: WakeBatch, context: ChannelHandlerContext)
}
