import NIOCore
import NIOSSL

/// The handlers of a connection to the HTTPS port, in front of the same ``ConnectionGuard`` and ``ConnectionFront``
/// as a cleartext one's: plain HTTP refused (``PlaintextRefusal``), TLS with the pair loaded now
/// (``TLSCertificates``), file bodies read into buffers for the encryption (``FileRegionReader``). A handshake that
/// never finishes is closed by the guard's request-head clock, which runs from the connection's opening.
enum TLSPipeline {
    /// Installs the handlers on a new connection, on its loop.
    static func install(
        on channel: any Channel, certificates: TLSCertificates, components: ServerComponents,
        guard connectionGuard: ConnectionGuard
    ) throws {
        let operations = channel.pipeline.syncOperations
        try operations.addHandler(PlaintextRefusal(logged: components.plaintextClients, logger: components.logger))
        try operations.addHandler(NIOSSLServerHandler(context: certificates.context))
        try operations.addHandler(FileRegionReader())
        try operations.addHandler(connectionGuard)
    }
}
