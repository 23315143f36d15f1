import Glibc
import NIOCore
import NIOExtras
import NIOPosix
import ServiceLifecycle

/// The server's listening sockets: one per event loop, all on one port (`SO_REUSEPORT`), each accepting the
/// connections the kernel gives it and keeping them on its own loop. A connection's setup, its first read and its
/// hit answers then run on the thread that accepted it, with no other thread to wake.
///
/// It replaces Hummingbird's `Server`, whose one listener hands every accepted connection to the next loop of the
/// group and back five times (NIO's accept handler, then the async server channel's child initializer) before its
/// first read: five wake-ups of an idle thread in every new connection's first byte (`bench/PROFILES.md`). Each
/// connection's pipeline is its ``ConnectionGuard``'s to set up (NIO's HTTP/1 decoder only once the front hands a
/// connection over: ``ConnectionGuard/installDecoder(front:)``).
///
/// A port shared with `SO_REUSEPORT` can be joined by any process of the same user: a second server started on the
/// port by mistake would silently take a share of the connections (and a bind to port 0 may be given a port another
/// such group holds, when the kernel runs out of free ones). Once bound, the sockets on the port that are not ours
/// are looked for (``ListeningSocket``'s `strangers(to:)`): with port 0 another port is taken, otherwise the server
/// stops with an error saying so.
///
/// Graceful shutdown stops accepting and asks every connection to quiesce (finish its request, then close; NIO's
/// `ServerQuiescingHelper`, as Hummingbird's server does); `run()` returns once all have closed. Cancellation (the
/// service group's grace is over) closes the connections.
struct PortListeners: Service {
    /// The open connections, to wait for at shutdown and to end when its grace is over.
    let connections: ConnectionTasks
    /// Sets up an accepted connection's pipeline (its guard); on its loop, before it is registered.
    let initializeConnection: @Sendable (any Channel) throws -> Void
    /// The address to bind.
    let host: String
    /// The port to bind (0: one the kernel picks).
    let port: Int
    /// The kernel's accept backlog of each socket.
    let backlog: Int
    /// Past this many open connections (all listeners together), the listeners stop accepting until one closes.
    let maxConnections: Int
    /// One listener per loop of this group.
    let group: MultiThreadedEventLoopGroup
    /// Called with the bound port once every listener accepts.
    let onListening: @Sendable (Int) async -> Void

    func run() async throws {
        let connections = connections
        let gate = AcceptGate(limit: maxConnections)
        let loops = Array(group.makeIterator())
        let sockets = try bindSockets(count: loops.count)
        var listeners: [any Channel] = []
        var helpers: [ServerQuiescingHelper] = []
        do {
            for (loop, socket) in zip(loops, sockets) {
                let helper = ServerQuiescingHelper(group: loop)
                listeners.append(
                    try await listen(on: socket.descriptor, loop: loop, helper: helper, gate: gate))
                helpers.append(helper)
            }
        } catch {
            // The sockets made into channels close with them, the one that failed with NIO's; the others here.
            for socket in sockets.dropFirst(listeners.count + 1) { socket.close() }
            for listener in listeners { try? await listener.close() }
            throw error
        }
        let boundPort = sockets[0].port
        await onListening(boundPort)
        let quiescing = helpers
        let bound = listeners
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                for listener in bound { try? await listener.closeFuture.get() }
                await connections.allEnded()
            } onGracefulShutdown: {
                for helper in quiescing { helper.initiateShutdown(promise: nil) }
            }
        } onCancel: {
            for listener in bound { listener.close(promise: nil) }
            connections.cancelAll()
        }
    }

    /// Binds `count` sockets to the address, the first to ``port`` and the others to the port it got, and checks
    /// that no other process listens there too (with port 0, tries another port up to 8 times).
    private func bindSockets(count: Int) throws(ListenError) -> [ListeningSocket] {
        for _ in 0..<8 {
            var sockets: [ListeningSocket] = []
            do throws(ListenError) {
                let first = try ListeningSocket(host: host, port: port, backlog: backlog)
                sockets.append(first)
                while sockets.count < count {
                    sockets.append(try ListeningSocket(host: host, port: first.port, backlog: backlog))
                }
            } catch {
                for socket in sockets { socket.close() }
                throw error
            }
            if ListeningSocket.strangers(to: sockets).isEmpty { return sockets }
            for socket in sockets { socket.close() }
            guard port == 0 else { throw .shared(host: host, port: port) }
        }
        throw ListenError(
            host: host, port: port, problem: "every port the kernel picked was shared with another process")
    }

    /// Has `loop` accept on `descriptor` (its own listening socket), its connections kept on that loop.
    private func listen(
        on descriptor: CInt, loop: any EventLoop, helper: ServerQuiescingHelper, gate: AcceptGate
    ) async throws -> any Channel {
        let connections = connections
        let initializeConnection = initializeConnection
        return try await ServerBootstrap(group: loop)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(gate.makeHandler())
                    try channel.pipeline.syncOperations.addHandler(helper.makeServerChannelHandler(channel: channel))
                }
            }
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    connections.opened(channel)
                    try initializeConnection(channel)
                }
            }
            .withBoundSocket(descriptor).get()
    }
}
