import NIOCore
import NIOHTTP1

/// Between the HTTP/1 decoder and the conversion to HTTP types (which drops the version):
///
/// - makes a request's wish to close explicit as `Connection: close` (an HTTP/1.0 request without keep-alive,
///   `Connection: Close` in any case, CONNECT, and upgrade requests, after which the parser reads nothing more):
///   the one form Hummingbird, the hit path and ``ConnectionGuard`` test;
/// - answers an HTTP/1.0 request as HTTP/1.0, so that its body is never sent with chunked framing it cannot read:
///   an answer of unknown length then ends when the connection closes (`Connection: close`, closed after the
///   answer), and a keep-alive one that has a length says `Connection: keep-alive`.
final class CloseNormalizer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The requests whose answer's head has not been written, in order: version and whether they close anyway.
    private var pending: [(version: HTTPVersion, closes: Bool)] = []
    /// Whether the answer being written must end by closing the connection.
    private var closeAtEnd = false

    /// The field this handler adds to a request head with no `Host` (HTTP/1.1) or more than one, which RFC 9112
    /// section 3.2 says to answer 400: the responder answers so (the conversion to HTTP types keeps one `Host` at
    /// most, and no version). A client's own field of this name is removed.
    static let invalidHostField = "X-HLSCache-Invalid-Host"

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        let hosts = head.headers[canonicalForm: "host"].count
        let invalidHost = hosts > 1 || (hosts == 0 && (head.version.major, head.version.minor) >= (1, 1))
        var closes = ClosingRule.closes(
            major: head.version.major, minor: head.version.minor,
            tokens: ClosingRule.Tokens(fieldValues: head.headers["connection"] + head.headers["proxy-connection"]),
            isConnect: head.method == .CONNECT, upgrades: head.headers.contains(name: "upgrade"))
        if invalidHost || head.headers.contains(name: Self.invalidHostField) {
            head.headers.remove(name: Self.invalidHostField)
            if invalidHost {
                head.headers.add(name: Self.invalidHostField, value: "\(hosts)")
                closes = true
            }
            if !closes {
                pending.append((head.version, closes))
                context.fireChannelRead(wrapInboundOut(.head(head)))
                return
            }
        }
        pending.append((head.version, closes))
        if closes {
            head.headers.replaceOrAdd(name: "connection", value: "close")
            context.fireChannelRead(wrapInboundOut(.head(head)))
        } else {
            context.fireChannelRead(data)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(var head) where head.status.code >= 200 && !pending.isEmpty:
            let request = pending.removeFirst()
            guard request.version == .http1_0 else {
                context.write(data, promise: promise)
                return
            }
            head.version = .http1_0
            if request.closes {
                head.headers.replaceOrAdd(name: "connection", value: "close")
            } else if head.headers.contains(name: "content-length") || !Self.hasBody(head.status) {
                head.headers.replaceOrAdd(name: "connection", value: "keep-alive")
            } else {
                // No length: an HTTP/1.0 body of unknown length ends when the connection does.
                head.headers.replaceOrAdd(name: "connection", value: "close")
                closeAtEnd = true
            }
            context.write(wrapOutboundOut(.head(head)), promise: promise)
        case .end where closeAtEnd:
            closeAtEnd = false
            let written = promise ?? context.eventLoop.makePromise(of: Void.self)
            context.write(data, promise: written)
            written.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        default:
            context.write(data, promise: promise)
        }
    }

    private static func hasBody(_ status: HTTPResponseStatus) -> Bool {
        status != .noContent && status != .notModified
    }
}
