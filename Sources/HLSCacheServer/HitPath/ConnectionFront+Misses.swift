import NIOCore
import SegmentCache

/// The misses ``ConnectionFront`` answers itself: a request for an origin object that is not cached, whose fill the front
/// has just started, with nothing pipelined behind it.
///
/// The answer is the responder's plan (``Answer/origin(_:record:components:)``), made on a task that prefers the
/// connection's event loop: it waits there for the origin's head, and wakes there when the fill announces it, with no
/// other thread to schedule. The front writes it, as bytes: its head, then its body as the fill brings it (each
/// chunk flushed at once; the next one read once the socket takes more). A body of unknown length goes in chunks
/// (`Transfer-Encoding: chunked`), so that its end can be told from a cut. A body cut short (the fill failed, the
/// player left) closes the connection without a clean end, as the responder's writer does.
///
/// Meanwhile the requests after it wait in the front's unread bytes and its reads are held; a half-close and a
/// graceful shutdown's quiesce wait for its end. Neither Hummingbird's decoder nor its responder sees the request:
/// what they would add to the miss's first byte is measured in `bench/PROFILES.md`.
extension ConnectionFront {
    /// Answers `request`, resolved to `resolved`, from the cache's verdict this front looked up just now.
    func takeMiss(
        _ request: ExchangeRequest, resolved: RequestResolution.ProxiedObject,
        verdict: Result<CacheVerdict, CacheError>,
        context: ChannelHandlerContext
    ) {
        connection.eventLoopAnswerStarted(closing: request.closes)
        if request.closes { mode = .closing }
        answeringMiss = true
        components.metrics.frontMiss()
        let record = Answer.record(of: request, originURL: resolved.url, components: components)
        let components = components
        let closing = request.closes
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        // Runs here until it waits for the origin's head, then on this event loop.
        let task = Task.immediate(executorPreference: EventLoopTaskExecutor(context.eventLoop)) {
            let answer = await Answer.origin(resolved, record: record, components: components, verdict: verdict)
            let (front, context) = bound.value
            await front.write(miss: answer, closing: closing, context: context)
        }
        // Unless it was answered already (a fill that failed before its first wait).
        if answeringMiss { missTask = task }
    }

    /// Writes the miss's answer; on the event loop.
    private func write(miss answer: Answer, closing: Bool, context: ChannelHandlerContext) async {
        guard context.channel.isActive else {
            // The player left while the origin was asked: nothing to write.
            connection.eventLoopAnswerAbandoned()
            answer.finished(bytes: 0, aborted: ChannelError.ioOnClosedChannel, components: components)
            missEnded(context: context)
            return
        }
        guard case .stream(let body) = answer.body else {
            // A failure's reason, a rendered playlist: there to send at once, as a hit's body is.
            if let channelBody = ChannelBody(of: answer) {
                send(answer, body: channelBody, closing: closing, context: context, isHit: false)
                context.flush()
                cork.off(context.channel)
            }
            missEnded(context: context)
            return
        }
        let chunked = answer.length == nil
        var head = context.channel.allocator.buffer(capacity: 512)
        answer.writeHead(closing: closing, chunked: chunked, into: &head)
        var last = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(head)), promise: last)
        var sent: Int64 = 0
        var failure: (any Error)?
        do {
            var chunks = body.makeAsyncIterator()
            while let chunk = try await chunks.next(isolation: nil) {
                guard context.channel.isActive else { throw ChannelError.ioOnClosedChannel }
                // An empty chunk would end a chunked body.
                if chunk.isEmpty { continue }
                last = context.eventLoop.makePromise(of: Void.self)
                let bytes = Self.bodyBytes(chunk, chunked: chunked, allocator: context.channel.allocator)
                context.writeAndFlush(wrapOutboundOut(.byteBuffer(bytes)), promise: last)
                sent += Int64(chunk.count)
                if !context.channel.isWritable { try await last.futureResult.get() }
            }
            if let expected = answer.length, sent != expected {
                let url = answer.record.originURL ?? answer.record.path
                throw TruncatedBodyError(url: url, expected: expected, sent: sent)
            }
            if chunked {
                last = context.eventLoop.makePromise(of: Void.self)
                context.writeAndFlush(wrapOutboundOut(.byteBuffer(Self.lastChunk)), promise: last)
            }
        } catch {
            failure = error
        }
        if let failure {
            // No clean end: the writes still pending fail first (the answers before this one complete in order).
            context.close(promise: nil)
            inFlight.append(answer, streamed: sent, connection: connection)
            let failed = context.eventLoop.makePromise(of: Void.self)
            finishWhenWritten(failed.futureResult, context: context)
            failed.fail(failure)
        } else {
            inFlight.append(answer, streamed: sent, connection: connection)
            finishWhenWritten(last.futureResult, context: context)
        }
        missEnded(context: context)
    }

    /// The miss's end is written (or it is over): the requests that waited are read, then reads go on.
    private func missEnded(context: ChannelHandlerContext) {
        answeringMiss = false
        missTask = nil
        finishedSending(context: context)
    }

    /// A chunk of body as written: as it is, or framed as one chunk of a chunked body.
    private static func bodyBytes(_ chunk: [UInt8], chunked: Bool, allocator: ByteBufferAllocator) -> ByteBuffer {
        guard chunked else { return allocator.buffer(bytes: chunk) }
        var buffer = allocator.buffer(capacity: chunk.count + 20)
        buffer.writeString(String(chunk.count, radix: 16))
        buffer.writeStaticString("\r\n")
        buffer.writeBytes(chunk)
        buffer.writeStaticString("\r\n")
        return buffer
    }

    /// The end of a chunked body.
    private static let lastChunk = ByteBuffer(staticString: "0\r\n\r\n")
}
