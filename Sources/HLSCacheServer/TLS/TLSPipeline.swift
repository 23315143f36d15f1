import NIOCore
import NIOSSL
import NIOTLS

/// The handlers of a connection to the HTTPS port: plain HTTP refused (``PlaintextRefusal``), a handshake deadline
/// (``HandshakeDeadline``), TLS with the pair loaded now (``TLSCertificates``), small writes packed into whole records
/// (``TLSRecordPacker``), file bodies read into buffers for the encryption (``FileRegionReader``), then by ALPN either
/// HTTP/2 (``HTTP2Pipeline``) or the same ``ConnectionGuard`` and ``ConnectionFront`` as a cleartext HTTP/1
/// connection's.
enum TLSPipeline {
    /// Installs the handlers on a new connection, on its loop.
    static func install(
        on channel: any Channel, certificates: TLSCertificates, components: ServerComponents,
        counter: ConnectionCounter, timeouts: ConnectionTimeouts
    ) throws {
        let operations = channel.pipeline.syncOperations
        try operations.addHandler(SocketEnd())
        try operations.addHandler(PlaintextRefusal(logged: components.plaintextClients, logger: components.logger))
        try operations.addHandler(NIOSSLServerHandler(context: certificates.context))
        try operations.addHandler(TLSRecordPacker())
        // Behind the TLS layer: the handshake's completion is an event that layer sends on.
        try operations.addHandler(HandshakeDeadline(timeout: timeouts.requestHead))
        try operations.addHandler(FileRegionReader())
        try operations.addHandler(
            ApplicationProtocolNegotiationHandler { result, channel in
                channel.eventLoop.makeCompletedFuture {
                    if case .negotiated("h2") = result {
                        try HTTP2Pipeline.install(
                            on: channel, components: components, counter: counter, idle: timeouts.idle)
                    } else {
                        try channel.pipeline.syncOperations.addHandler(
                            ConnectionGuard(counter: counter, timeouts: timeouts, components: components))
                    }
                }
            })
    }
}

/// Closes a connection whose TLS handshake has not completed within `timeout` of its opening (a client that opens
/// connections and never finishes them holds nothing for long); gone once the handshake completes.
final class HandshakeDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny

    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) {
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        context.fireUserInboundEventTriggered(event)
        if case TLSUserEvent.handshakeCompleted = event {
            timer?.cancel()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}

/// First on a TLS connection, before the TLS layer: what closes the socket itself when the server's grace is over
/// (``ConnectionTasks/cancelAll()``). A close from behind the TLS layer waits for its `close_notify` to be written, which
/// a client that stopped reading never lets happen.
final class SocketEnd: ChannelInboundHandler {
    typealias InboundIn = NIOAny
}
