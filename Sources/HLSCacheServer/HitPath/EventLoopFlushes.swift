import NIOCore
import NIOPosix

/// Flushes of the answers ``ConnectionFront`` writes, deferred to the end of the event loop's current round: the loop first
/// answers every request it read in that round, then flushes each connection once, in a burst of writes.
///
/// A flush per answer interleaves reads with writes, and each write wakes a client thread that, on a machine with
/// few cores, takes the core from the loop before it reads the next request: with many connections of cached live
/// playlists, flushing at the end of the round serves markedly more requests a second (`bench/PROFILES.md`). The
/// latency added is the rest of the round, the time to answer the requests already read.
///
/// A parked LL-HLS reload's answer, and a planned answer's, are flushed at once instead: the answers a fill wakes
/// together are better sent early than in a burst at the end (deferring them made `llhls_fanout_last_ms` worse).
enum EventLoopFlushes {
    /// The handlers waiting for their connection's flush. Each round belongs to one thread (it is thread-specific)
    /// and is only touched there, hence unchecked.
    private final class Round: @unchecked Sendable {
        var waiting: [(handler: any RoundFlushed, context: ChannelHandlerContext)] = []
    }

    /// Each event loop's round (one per thread: an event loop runs on one).
    private static let rounds = ThreadSpecificVariable<Round>()

    /// Calls `handler`'s ``RoundFlushed/roundEnded(context:)`` at the end of its event loop's current round, which
    /// flushes; call on that loop, once per round per connection (the handler remembers that it asked).
    static func flush(_ handler: any RoundFlushed, context: ChannelHandlerContext) {
        let round = rounds.current(orMake: Round.init)
        round.waiting.append((handler, context))
        guard round.waiting.count == 1 else { return }
        let bound = NIOLoopBound(round, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let round = bound.value
            // Taken first: a flush completes writes whose callbacks may ask for the next round.
            let waiting = round.waiting
            round.waiting = []
            for (handler, context) in waiting { handler.roundEnded(context: context) }
        }
    }
}

/// A handler whose answers ``EventLoopFlushes`` flushes at the end of the event loop's round.
protocol RoundFlushed: AnyObject {
    /// The round ended: flush `context` (the handler's own).
    func roundEnded(context: ChannelHandlerContext)
}
