import Logging
import NIOCore
import SegmentCache

/// Watches the entry files an event-loop writer is sending with `sendfile`: once a second while one is in flight, it
/// checks that the file still holds the slice being sent (``FileSlice/isIntact``). A file cut short under the send
/// (by hand, a failing disk) would otherwise leave `sendfile` with nothing to send and the socket writable: the
/// event loop would spin on it until the connection's other clocks ran out. Found so, the entry is removed, the
/// connection closed (the player sees an answer cut short, never a short one taken for whole) and it is logged once.
final class FileSendWatch {
    private var scheduled: Scheduled<Void>?
    /// How often the files in flight are checked.
    static let interval = TimeAmount.seconds(1)

    /// Starts watching, unless it is already: `damagedFile` says which file answer in flight (its URL) no longer
    /// holds its slice, `nil` when none; `isSending` whether any file answer is still in flight. On the event loop.
    func start(
        context: ChannelHandlerContext, components: ServerComponents, damagedFile: @escaping () -> String?,
        isSending: @escaping () -> Bool
    ) {
        guard scheduled == nil else { return }
        scheduled = context.eventLoop.assumeIsolated().scheduleTask(in: Self.interval) { [self] in
            scheduled = nil
            guard context.channel.isActive else { return }
            if let url = damagedFile() {
                components.logger.warning(
                    "cache entry cut short while it was sent: removed, connection closed",
                    metadata: ["url": "\(SecretRedaction.redact(url))"])
                _ = components.cache.purge(url: url)
                context.channel.close(promise: nil)
                return
            }
            if isSending() {
                start(context: context, components: components, damagedFile: damagedFile, isSending: isSending)
            }
        }
    }

    /// Stops watching (the connection is going).
    func stop() {
        scheduled?.cancel()
        scheduled = nil
    }
}
