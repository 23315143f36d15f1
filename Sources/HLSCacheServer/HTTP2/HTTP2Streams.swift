import NIOCore
import NIOHTTP2

/// Behind an HTTP/2 connection's framing layer (swift-nio-http2's `NIOHTTP2Handler`, with no stream channels): the
/// connection's open streams, each an ``HTTP2Exchange`` that the stream's first `HEADERS` makes, fed the stream's
/// frames and told when the stream closes (`StreamClosedEvent`: ended both ways, reset by either side, or gone with
/// the connection).
///
/// The streams are plain objects, not channels: a stream costs its exchange and nothing else (no channel, pipeline
/// or promise of its own).
///
/// Each answer is flushed through the framing layer as it is written (``write(_:on:context:promise:flush:)``), and
/// ``HTTP2RoundFlush`` in front of that layer holds the flush to the socket until the end of the event loop's round:
/// a thousand answers a fill wakes at once go out in one write. Flushed one by one, the streams also end in the order
/// they were answered: the framing layer keeps its streams in arrays sorted by number, and a flush of a thousand
/// ended streams at once ended them in the order of a hash table, each removal from the middle of those arrays moving
/// the streams behind it (half of the 18 ms a thousand LL-HLS answers took to flush).
///
/// What stream channels did and this does instead:
/// - the connection's inbound flow-control window: each `DATA` frame's length is given back to it
///   (``windowUpdateThreshold`` at a time), so request bodies never stall the connection; a stream's own window
///   (1 MiB, ``HTTP2Pipeline``) is more than an exchange ever reads (``HTTP2Exchange/maxBodyBytes``);
/// - a graceful shutdown's quiesce (`ChannelShouldQuiesceEvent`): a `GOAWAY` naming the last stream opened, the
///   streams in flight finished, then the connection closed.
final class HTTP2Streams: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// The request-body bytes received before the connection's window gets them back in one `WINDOW_UPDATE`: half
    /// the window HTTP/2 starts a connection with (65,535 bytes).
    static let windowUpdateThreshold = 32 << 10

    private let components: ServerComponents
    /// The connection's front, for what it measures (``HTTP2Connection/cmsdDynamic(components:)``).
    private weak var connection: HTTP2Connection?
    /// The open streams' exchanges.
    private var exchanges: [HTTP2StreamID: HTTP2Exchange] = [:]
    /// The highest stream the client opened (what a `GOAWAY` names).
    private var lastStreamID = HTTP2StreamID.rootStream
    /// Request-body bytes not yet given back to the connection's window.
    private var unacknowledgedBytes = 0
    /// Whether the server is shutting down: the connection closes once its last stream has.
    private var quiescing = false

    init(components: ServerComponents, connection: HTTP2Connection?) {
        self.components = components
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers:
            let exchange: HTTP2Exchange
            if let open = exchanges[frame.streamID] {
                exchange = open
            } else {
                exchange = HTTP2Exchange(
                    streamID: frame.streamID, streams: self, components: components, connection: connection)
                exchanges[frame.streamID] = exchange
                if frame.streamID > lastStreamID { lastStreamID = frame.streamID }
            }
            exchange.receive(frame.payload, context: context)
        case .data(let data):
            giveBack(data, context: context)
            exchanges[frame.streamID]?.receive(frame.payload, context: context)
        default:
            // SETTINGS, PING, WINDOW_UPDATE, PRIORITY, GOAWAY: the framing layer's; RST_STREAM: its
            // `StreamClosedEvent` follows.
            break
        }
    }

    /// Gives a `DATA` frame's flow-controlled length (its bytes and padding) back to the connection's window once
    /// enough has come.
    private func giveBack(_ data: HTTP2Frame.FramePayload.Data, context: ChannelHandlerContext) {
        unacknowledgedBytes += data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0)
        guard unacknowledgedBytes >= Self.windowUpdateThreshold else { return }
        let increment = unacknowledgedBytes
        unacknowledgedBytes = 0
        write(.windowUpdate(windowSizeIncrement: increment), on: .rootStream, context: context, promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case let closed as StreamClosedEvent:
            exchanges.removeValue(forKey: closed.streamID)?.closed()
            if quiescing, exchanges.isEmpty { closeSoon(context: context) }
        case is ChannelShouldQuiesceEvent:
            quiesce(context: context)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Shutting down: the client is told which streams will be answered (`GOAWAY`, no error), and the connection
    /// closes when they have been (at once when none is open).
    private func quiesce(context: ChannelHandlerContext) {
        guard !quiescing else { return }
        quiescing = true
        write(
            .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: nil), on: .rootStream,
            context: context, promise: nil)
        if exchanges.isEmpty { closeSoon(context: context) }
    }

    /// Closes the connection once the framing layer is done with what it is doing (the last stream is reported
    /// closed from within the write that ends it); ``HTTP2RoundFlush`` flushes what waits before the close.
    private func closeSoon(context: ChannelHandlerContext) {
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.execute { bound.value.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        let open = exchanges
        exchanges = [:]
        for exchange in open.values { exchange.closed() }
        context.fireChannelInactive()
    }

    /// Hands `payload` of stream `streamID` to the framing layer, and unless `flush` is `false` (another write of
    /// the same answer follows at once), flushes it through that layer (to the socket at the end of the round).
    func write(
        _ payload: HTTP2Frame.FramePayload, on streamID: HTTP2StreamID, context: ChannelHandlerContext,
        promise: EventLoopPromise<Void>?, flush: Bool = true
    ) {
        context.write(wrapOutboundOut(HTTP2Frame(streamID: streamID, payload: payload)), promise: promise)
        if flush { context.flush() }
    }
}
