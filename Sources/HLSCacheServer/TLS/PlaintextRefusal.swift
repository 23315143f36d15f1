import Logging
import NIOCore
import SegmentCache
import Synchronization

/// First on a TLS port's connections: a client that speaks plain HTTP there (its first byte is not a TLS handshake
/// record's, 0x16) is closed at once, and logged once per client address (a bounded memory of them), rather than left
/// to the TLS handler's error. Gone after the first read.
final class PlaintextRefusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let logged: LoggedClients
    private let logger: Logger

    init(logged: LoggedClients, logger: Logger) {
        self.logged = logged
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        guard let first = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else { return }
        guard first == 0x16 else {
            let client = context.channel.remoteAddress?.ipAddress ?? "unknown"
            if logged.first(client) {
                logger.warning(
                    "plain HTTP sent to the TLS port: closed (logged once per client)",
                    metadata: ["client": "\(client)"])
            }
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

/// Client addresses already logged for something logged once per client: at most ``capacity``, the oldest forgotten.
final class LoggedClients: Sendable {
    static let capacity = 1024
    private let clients = Mutex(ClockMap<String, Void>(capacity: LoggedClients.capacity))

    /// Whether `client` is new (and now remembered).
    func first(_ client: String) -> Bool {
        clients.withLock { clients in
            guard !clients.contains(client) else { return false }
            _ = clients.insert((), forKey: client)
            return true
        }
    }
}
