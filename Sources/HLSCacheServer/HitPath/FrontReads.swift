import NIOCore

/// How a ``ConnectionFront`` connection's reads are asked for: every decision about them, in one place.
///
/// The connection's `autoRead` is off, and the front asks for each read at the end of the one before it, as
/// `autoRead` would, from its own place in the pipeline: NIO would ask from the pipeline's tail, through every
/// handler (a few percent of a hit's CPU), and no handler behind the front holds reads back (the decoder's requests
/// wait in the front). On a channel whose options cannot be set, `autoRead` stays on and the front only passes reads
/// on.
///
/// A read is held back while the front's answers wait (``read(context:holding:)``), and asked for once they no longer
/// do (``release(context:)``).
///
/// A class, not a value the front mutates in place: a read asked for comes back into the front's `read` (and so here)
/// before the call returns, which a mutation of a stored value in progress would forbid (exclusive access).
final class FrontReads {
    /// Whether the front asks for the reads (`autoRead` is off).
    private(set) var asksForReads = false
    /// A read asked for while the answers waited for the socket.
    private var held = false

    /// The front is in the pipeline: it takes the reads over, and asks for the first one if the channel is active
    /// already (else ``channelActive(context:)`` does). Nothing is written before the first read: nothing holds it.
    func takeOver(context: ChannelHandlerContext) {
        asksForReads = (try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)) != nil
        if asksForReads, context.channel.isActive { context.read() }
    }

    /// The channel is active: its first read.
    func channelActive(context: ChannelHandlerContext) {
        if asksForReads { context.read() }
    }

    /// A read ended: the next one, as `autoRead` would ask for it, unless `holding`.
    func askForNext(context: ChannelHandlerContext, holding: Bool) {
        guard asksForReads else { return }
        read(context: context, holding: holding)
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
