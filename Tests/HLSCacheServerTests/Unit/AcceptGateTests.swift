import HLSCacheTestTraits
import NIOCore
import NIOEmbedded
import Testing

@testable import HLSCacheServer

/// The connection cap over all listeners: past it none accepts; a close anywhere lets each accept again.
@Suite("Accept gate", .sharedMachine)
struct AcceptGateTests {
    @Test("past the cap no listener reads; a close on one listener's connection lets every stopped one read again")
    func capIsSharedByTheListeners() throws {
        let gate = AcceptGate(limit: 2)
        let first = try Listener(gate: gate)
        let second = try Listener(gate: gate)
        let accepted = [EmbeddedChannel(), EmbeddedChannel()]
        try first.accept(accepted[0])
        try second.accept(accepted[1])
        // Two open of two: neither listener asks its socket for more.
        first.read()
        second.read()
        #expect(first.reads == 0)
        #expect(second.reads == 0)
        // One of the first listener's connections closes: both may accept again.
        try close(accepted[0])
        first.run()
        second.run()
        #expect(first.reads == 1)
        #expect(second.reads == 1)
        // Below the cap, reads pass at once.
        second.read()
        #expect(second.reads == 2)
    }

    @Test("a connection closed before the cap is reached frees its place")
    func closedConnectionsAreUncounted() throws {
        let gate = AcceptGate(limit: 1)
        let listener = try Listener(gate: gate)
        for _ in 0..<3 {
            let connection = EmbeddedChannel()
            try listener.accept(connection)
            try close(connection)
        }
        listener.read()
        #expect(listener.reads == 1)
    }
}

/// Closes an accepted connection and runs what its close future calls.
private func close(_ connection: EmbeddedChannel) throws {
    try connection.close().wait()
    connection.embeddedEventLoop.run()
}

/// A listener's pipeline on an embedded channel: the gate's handler, and in front of it a counter of the reads that
/// reach the socket.
private struct Listener {
    let channel = EmbeddedChannel()
    let counter = ReadCounter()

    init(gate: AcceptGate) throws {
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.pipeline.syncOperations.addHandler(gate.makeHandler())
        // Active, as a bound listener is (an inactive channel passes no read on); its first automatic read is not
        // counted.
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        counter.count = 0
    }

    var reads: Int { counter.count }

    func accept(_ connection: EmbeddedChannel) throws {
        try channel.writeInbound(connection as any Channel)
    }

    func read() {
        channel.read()
    }

    func run() {
        channel.embeddedEventLoop.run()
    }
}

private final class ReadCounter: ChannelOutboundHandler {
    typealias OutboundIn = Never
    var count = 0

    func read(context: ChannelHandlerContext) {
        count += 1
        context.read()
    }
}
