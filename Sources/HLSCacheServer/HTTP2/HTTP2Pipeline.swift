import NIOCore
import NIOHTTP2
import Synchronization

/// The handlers of an HTTP/2 connection (by ALPN over TLS, or by prior knowledge in cleartext): swift-nio-http2's
/// framing layer, with its limits, and behind it ``HTTP2Streams``, one ``HTTP2Exchange`` per stream (no stream
/// channels); ``HTTP2Connection`` in front of it counts the connection and closes it when idle.
///
/// The limits (RFC 9113 and the attacks on it):
/// - at most `--http2-max-streams` streams open at once (`SETTINGS_MAX_CONCURRENT_STREAMS`, 100 by default);
/// - a header list of at most ``maxHeaderListSize`` bytes (`SETTINGS_MAX_HEADER_LIST_SIZE`), an HPACK table of 4 KiB;
/// - the rapid-reset flood (CVE-2023-44487): past 200 streams reset by the client in 30 s, the connection is closed;
/// - CONTINUATION floods (CVE-2024-27316): past swift-nio-http2's limit of sequential CONTINUATION frames, closed;
/// - control-frame floods (PING, SETTINGS) and empty DATA frames: swift-nio-http2's own limits;
/// - a malformed request head (RFC 9113 section 8.1.1, `HTTP2HeadCheck`): a 400 on its stream, the connection
///   goes on.
enum HTTP2Pipeline {
    /// The largest header list a client may send, in bytes.
    static let maxHeaderListSize = 16 << 10

    /// Installs the handlers behind what is there (TLS, or nothing).
    static func install(
        on channel: any Channel, components: ServerComponents, counter: ConnectionCounter, idle: TimeAmount
    ) throws {
        var connection = NIOHTTP2Handler.ConnectionConfiguration()
        connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: components.configuration.http2MaxStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: maxHeaderListSize),
            HTTP2Setting(parameter: .headerTableSize, value: 4096),
            HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
        ]
        // The request's header block and its body's length are checked once per stream, where the request is read
        // (`DecodedHead(http2:)`, `HTTP2Exchange`): the framing layer's checks run on every answer's block too, a
        // tenth of the work of a thousand woken LL-HLS answers. What an answer carries is made legal where it is
        // made (`HTTPField` values, lowercase names).
        connection.headerBlockValidation = .disabled
        connection.contentLengthValidation = .disabled
        let operations = channel.pipeline.syncOperations
        let front = HTTP2Connection(counter: counter, idle: idle)
        try operations.addHandler(front)
        try operations.addHandler(HTTP2RoundFlush())
        try operations.addHandler(
            NIOHTTP2Handler(mode: .server, connectionConfiguration: connection, streamConfiguration: .init()))
        try operations.addHandler(HTTP2Streams(components: components, connection: front))
        try operations.addHandler(HTTP2ConnectionError())
    }
}

/// In front of an HTTP/2 connection's framing layer: counts the connection among the server's (past the cap it is
/// closed at once), closes it when the client closes its side, and when it has read nothing for the idle timeout (a client with streams open sends
/// window updates as it reads; one waiting on a blocking reload waits seconds, not a minute).
final class HTTP2Connection: ChannelInboundHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny

    private let counter: ConnectionCounter
    private let idle: TimeAmount
    private var counted = false
    private var lastRead = NIODeadline.now()
    private var timer: Scheduled<Void>?
    /// The connection's socket, once added.
    private weak var channel: (any Channel)?
    /// The connection's `CMSD-Dynamic` value (``cmsdDynamic(components:)``).
    private var measured = DynamicCMSD<String>()

    /// The connection's `CMSD-Dynamic` value for its streams' answers, as an HTTP/1 connection's (``DynamicCMSD``);
    /// `nil` with `--cmsd off`.
    func cmsdDynamic(components: ServerComponents) -> String? {
        guard let channel else { return nil }
        return measured.current(on: channel, cmsd: components.cmsd) { cmsd, info in
            cmsd.dynamicValue(deliveryRate: info.deliveryRate, roundTrip: info.roundTrip)
        }
    }

    init(counter: ConnectionCounter, idle: TimeAmount) {
        self.counter = counter
        self.idle = idle
    }

    func handlerAdded(context: ChannelHandlerContext) {
        channel = context.channel
        counted = true
        if counter.open.add(1, ordering: .relaxed).newValue > counter.limit {
            context.close(promise: nil)
            return
        }
        schedule(context: context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        if counted {
            counted = false
            counter.open.subtract(1, ordering: .relaxed)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        lastRead = .now()
        context.fireChannelRead(data)
    }

    /// The client closed its side: an HTTP/2 connection has no half of its own to go on with (connections accept
    /// half-closure for HTTP/1's sake).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func schedule(context: ChannelHandlerContext) {
        let due = lastRead + idle
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: due) { [self] in
            guard lastRead + idle <= .now() else {
                schedule(context: context)
                return
            }
            context.close(promise: nil)
        }
    }
}

/// Behind the framing layer: a connection error it reports (a flood past its limits, a protocol error), after it has
/// written its `GOAWAY`, closes the connection. swift-nio-http2 only reports them.
final class HTTP2ConnectionError: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// In front of an HTTP/2 connection's framing layer: its flushes are deferred to the end of the event loop's round
/// (``EventLoopFlushes``), so the streams answered in one round (a thousand LL-HLS blocking reloads a fill wakes at
/// once, the requests of one read) go out in one flush: over TLS, one run of records and one write, not one each
/// (a flush per stream took 80 ms for a thousand). Behind it, each answer is flushed through the framing layer as it
/// is written (``HTTP2Streams``): the framing layer's own work is per frame either way, and streams it ends one at a
/// time are ended in order.
final class HTTP2RoundFlush: ChannelOutboundHandler, RoundFlushed {
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var flushAsked = false

    func flush(context: ChannelHandlerContext) {
        guard !flushAsked else { return }
        flushAsked = true
        EventLoopFlushes.flush(self, context: context)
    }

    func roundEnded(context: ChannelHandlerContext) {
        guard flushAsked else { return }
        flushAsked = false
        context.flush()
    }

    /// A close goes out after what waits for the round's flush: the framing layer's `GOAWAY` on a connection error,
    /// the last answers of a drain.
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if flushAsked {
            flushAsked = false
            context.flush()
        }
        context.close(mode: mode, promise: promise)
    }
}
