import NIOCore
import NIOHTTP1

/// Between the HTTP/1 decoder and the conversion to HTTP types (which drops the version): makes a request's wish to
/// close explicit as `Connection: close` (an HTTP/1.0 request without keep-alive, `Connection: Close` in any case,
/// CONNECT and upgrade requests), the one form Hummingbird, the hit path and ``ConnectionGuard`` test; and answers
/// an HTTP/1.0 request as HTTP/1.0, so that its body is never sent with chunked framing it cannot read.
final class CloseNormalizer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The versions of the requests whose answer's head has not been written, in order.
    private var versions: [HTTPVersion] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        versions.append(head.version)
        if !head.isKeepAlive || head.method == .CONNECT || head.headers.contains(name: "upgrade") {
            head.headers.replaceOrAdd(name: "connection", value: "close")
            context.fireChannelRead(wrapInboundOut(.head(head)))
        } else {
            context.fireChannelRead(data)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = unwrapOutboundIn(data), head.status.code >= 200, !versions.isEmpty else {
            context.write(data, promise: promise)
            return
        }
        if versions.removeFirst() == .http1_0 {
            head.version = .http1_0
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        } else {
            context.write(data, promise: promise)
        }
    }
}
