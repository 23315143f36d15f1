import HummingbirdCore
import Logging
import NIOCore

/// A Hummingbird child channel whose connection task runs on the channel's own event loop rather than on the global
/// executor (``EventLoopTaskExecutor``): the requests the hit path hands over reach the responder, and its answers
/// reach the socket, with no thread hop in between.
struct EventLoopBoundChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value

    /// The channel whose setup and handling this runs.
    let inner: Inner

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        inner.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await withTaskExecutorPreference(EventLoopTaskExecutor(value.channel.eventLoop)) {
            await inner.handle(value: value, logger: logger)
        }
    }
}
