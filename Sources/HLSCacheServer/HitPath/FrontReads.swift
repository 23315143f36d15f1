import NIOCore

/// How a ``ConnectionFront`` connection's reads are asked for: every decision about them, in one place.
///
/// The connection's `autoRead` is off, and the front asks for each read at the end of the one before it, as
/// `autoRead` would. While it reads requests itself, nothing it handed on is still being answered and the socket is
/// not full, it asks from its own place in the pipeline: NIO would ask from the pipeline's tail, through every
/// handler (a few percent of a hit's CPU). Otherwise, and for the rest of the connection once the decoder reads it,
/// it asks through the whole pipeline, so that every handler behind it may hold the read back: the responder's
/// channel until its requests are taken. On a channel
/// whose options cannot be set, `autoRead` stays on and the front only passes reads on.
///
/// A read is held back while the front's own answers wait for the socket to drain (``read(context:holding:)``), and
/// asked for once it has (``release(context:)``).
///
/// A class, not a value the front mutates in place: a read asked for through the pipeline comes back into the
/// front's `read` (and so here) before the call returns, which a mutation of a stored value in progress would forbid
/// (exclusive access).
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

    /// A read ended: the next one, as `autoRead` would ask for it. From here only when `shortcut` (the front reads
    /// requests itself, none it handed on is still being answered, and the socket takes writes); else through the
    /// whole pipeline.
    func askForNext(context: ChannelHandlerContext, shortcut: Bool, holding: Bool) {
        guard asksForReads else { return }
        if shortcut {
            read(context: context, holding: holding)
        } else {
            context.pipeline.syncOperations.read()
        }
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
