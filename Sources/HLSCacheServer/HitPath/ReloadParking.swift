import NIOCore
import OriginCache
import SegmentCache

/// How a connection parks LL-HLS blocking playlist reloads on its event loop, one at a time, while the fill they
/// would join is in flight: ``HitFront`` parks them before the HTTP/1 decoder, ``HitPathHandler`` after it. Each
/// parking is numbered, so that the end of a fill an earlier one waited for wakes no later one; when the fill ends,
/// ``fillEnded(_:resolved:since:batch:components:eventLoop:wake:)`` says what the parked request gets.
struct ReloadParking {
    /// What a parked request gets when the fill it waited for has ended.
    enum Outcome {
        /// A hit: the handler sends it.
        case answer(Answer)
        /// Its playlist is published but not rendered yet: it waits once more, to be woken by the same `wake`.
        case waiting
        /// Anything else (the fill failed, the rendering did not come in time): it goes on to the responder.
        case handOn
    }

    /// The number of the latest parking.
    private(set) var number = 0
    /// Whether the parked request already waits for its playlist's rendering (after its fill ended).
    private var awaitingRendering = false

    /// How long a parked request whose playlist is published waits for its rendering to be kept before it goes to
    /// the responder.
    static let renderingPatienceMilliseconds: Int64 = 200

    /// Parks a request on the fill of `key`, to be woken by `wake(number)` (from any thread) when the fill ends.
    /// - Returns: `false`, and nothing parked, when no fill of `key` is in flight (the caller starts one, and those
    ///   arriving meanwhile park on it).
    mutating func park(
        _ key: CacheKey, components: ServerComponents, wake: (Int) -> @Sendable () -> Void
    ) -> Bool {
        let next = number + 1
        guard components.cache.whenFillEnds(key, wake(next)) else { return false }
        number = next
        awaitingRendering = false
        return true
    }

    /// What the parked `request` (resolved to `resolved`, arrived at `since`) gets now that its fill ended; on the
    /// connection's event loop.
    mutating func fillEnded(
        _ request: HitRequest, resolved: RequestResolution.OriginRequest, since: ContinuousClock.Instant,
        batch: WakeBatch, components: ServerComponents, eventLoop: any EventLoop,
        wake: @escaping @Sendable () -> Void
    ) -> Outcome {
        func hit() -> Answer? {
            Answer(
                hitFor: request, resolved: resolved, components: components, canSendFile: true, arrivedAt: since,
                batch: batch)
        }
        if let answer = hit() { return .answer(answer) }
        guard !awaitingRendering else { return .handOn }
        if awaitRendering(of: resolved.key, components: components, eventLoop: eventLoop, wake: wake) {
            return .waiting
        }
        // Nothing to wait for, or the rendering was kept just now.
        return hit().map(Outcome.answer) ?? .handOn
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
