import HTTPTypes
import NIOCore
import NIOHTTP1
import RequestHeads

/// A request the HTTP/1 decoder read, whole: what its head asks for, and its body (up to ``maxBodyBytes``).
struct DecodedRequest {
    /// The request, or the refusal its head gets.
    var head: DecodedHead
    /// Its body, if it had one (`POST /admin/purge`'s form); `nil` past ``maxBodyBytes`` too (see ``bodyTooLarge``).
    var body: ByteBuffer?
    /// Whether its body was longer than ``maxBodyBytes`` (refused with 413: no route of hlscache's reads more).
    var bodyTooLarge = false

    /// The longest request body kept.
    static let maxBodyBytes = 16 << 10
}

/// Behind NIO's HTTP/1 decoder, on a connection ``ConnectionFront`` handed over (from the first request its scanner
/// does not read whole): gives each request the decoder reads, once its end has come, to the front
/// (``ConnectionFront/take(decoded:)``), which answers it as it answers the requests it reads itself. A decoding error
/// is a 400, after the answers before it, and the connection closes; so is a body past ``DecodedRequest/maxBodyBytes``
/// a 413, given as soon as it is (the rest of its request is dropped).
///
/// The decoder is a second producer of the front's exchanges, not a second answerer.
final class DecodedRequests: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart

    private let front: ConnectionFront
    /// The request being read.
    private var reading: DecodedRequest?
    /// Whether the decoder failed: nothing more comes.
    private var failed = false

    /// - Parameter front: the connection's front, which answers each request.
    init(front: ConnectionFront) {
        self.front = front
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !failed else { return }
        switch unwrapInboundIn(data) {
        case .head(let head):
            reading = DecodedRequest(head: DecodedHead(head))
        case .body(var part):
            guard var request = reading else { return }
            reading = nil
            var body = request.body ?? context.channel.allocator.buffer(capacity: part.readableBytes)
            guard body.readableBytes + part.readableBytes <= DecodedRequest.maxBodyBytes else {
                // Refused now, not once the rest has come (it may never end): the rest of the request is dropped,
                // and the refusal closes the connection.
                request.bodyTooLarge = true
                request.body = nil
                front.take(decoded: request)
                return
            }
            body.writeBuffer(&part)
            request.body = body
            reading = request
        case .end:
            guard let request = reading else { return }
            reading = nil
            front.take(decoded: request)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !failed else { return }
        failed = true
        reading = nil
        front.take(
            decoded: DecodedRequest(head: .refused(.badRequest, "malformed HTTP/1 request: \(Self.reason(error))")))
    }

    /// A decoding error, in a few words.
    private static func reason(_ error: any Error) -> String {
        if let error = error as? HTTPParserError { return "\(error)" }
        return "\(type(of: error))"
    }
}
