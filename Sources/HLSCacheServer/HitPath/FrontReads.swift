import NIOCore

/// How a ``HitFront`` connection's reads are asked for: every decision about them, in one place.
///
/// While the front reads requests, the connection's `autoRead` is off and the front asks for each read itself, at
/// the end of the read before it: from its own place in the pipeline while nothing it handed on is in the hands of
/// the handlers behind it (a walk of every handler per read otherwise, a few percent of a hit's CPU), and through the
/// whole pipeline while a request handed on is with them (the responder's channel may hold a read back until its
/// requests are taken). Once the decoder reads the connection, `autoRead` is on again and the channel asks as usual.
/// On a channel whose options cannot be set, `autoRead` stays on and the front only passes reads on.
///
/// A read is held back while the front's answers wait for the socket to drain (``read(context:holding:)``), and asked
/// for once it has (``release(context:)``).
///
/// A class, not a value the front mutates in place: asking for a read through the pipeline, or turning `autoRead` on,
/// comes back into the front's `read` (and so here) before the call returns, which a mutation of a stored value in
/// progress would forbid (exclusive access).
final class FrontReads {
    /// Whether the front asks for the reads (`autoRead` is off).
    private(set) var asksForReads = false
    /// A read asked for while the answers waited for the socket.
    private var held = false

    /// The front is in the pipeline: it takes the reads over, and asks for the first one if the channel is active
    /// already (else ``channelActive(context:holding:)`` does).
    func takeOver(context: ChannelHandlerContext, holding: Bool) {
        asksForReads = (try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)) != nil
        if asksForReads, context.channel.isActive { read(context: context, holding: holding) }
    }

    /// The channel is active: its first read.
    func channelActive(context: ChannelHandlerContext, holding: Bool) {
        if asksForReads { read(context: context, holding: holding) }
    }

    /// A read ended: the next one, as `autoRead` would ask for it; from here when `handedOn` (requests handed to the
    /// decoder whose answers are not written) is zero, else through the whole pipeline.
    func askForNext(context: ChannelHandlerContext, handedOn: Int, holding: Bool) {
        guard asksForReads else { return }
        if handedOn == 0 {
            read(context: context, holding: holding)
        } else {
            context.pipeline.syncOperations.read()
        }
    }

    /// The decoder reads the rest of the connection: `autoRead` is on again (which asks for a read unless one is
    /// pending).
    func handBack(context: ChannelHandlerContext) {
        guard asksForReads else { return }
        asksForReads = false
        try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: true)
    }

    /// A read asked for (by the handlers behind, or here): passed on towards the socket, unless `holding` (the front's
    /// answers wait for the socket to drain), when it waits for ``release(context:)``.
    func read(context: ChannelHandlerContext, holding: Bool) {
        if holding {
            held = true
            return
        }
        context.read()
    }

    /// The answers no longer wait for the socket: a read held back goes on.
    func release(context: ChannelHandlerContext) {
        guard held else { return }
        held = false
        context.read()
    }
}
