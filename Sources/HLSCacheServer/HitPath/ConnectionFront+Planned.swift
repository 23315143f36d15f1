import HTTPTypes
import Logging
import NIOCore
import OriginCache
import RequestHeads
import SegmentCache

/// The answers ``ConnectionFront`` plans off the event loop: a request for an origin object the cache does not hold
/// fresh (a miss, whose fill the front starts; a fill in flight, joined; an expired entry, for grace to decide).
///
/// The answer's plan (``Answer/origin(_:record:components:verdict:)``) is made on a task that prefers the connection's
/// event loop: it waits there for the origin's head, and wakes there when the fill announces it, with no other thread
/// to schedule. The front writes it, as bytes: its head, then its body as the fill brings it (each chunk flushed at
/// once; the next one read once the socket takes more). A body of unknown length goes in chunks
/// (`Transfer-Encoding: chunked`), so that its end can be told from a cut. A body cut short (the fill failed, the
/// player left) closes the connection without a clean end.
///
/// Meanwhile the requests after it wait in the front's unread bytes and its reads are held; a half-close and a
/// graceful shutdown's quiesce wait for its end (``ExchangeMachine``).
extension ConnectionFront {
    /// Answers `request`, resolved to `resolution`, that is not a hit the front can send at once: answered now when
    /// its route says so, else planned.
    /// - Parameter body: the request's body, when the decoder read one (a purge's form).
    /// - Returns: whether an answer was written at once (flushed at the end of the round).
    func answer(
        _ request: ExchangeRequest, resolution: RequestResolution, body: ByteBuffer?, context: ChannelHandlerContext
    ) -> Bool {
        let record = Answer.record(of: request, originURL: nil, components: components)
        switch Answer.route(request, resolution: resolution, record: record, components: components) {
        case .now(let answer):
            return sendNow(answer, for: request, context: context)
        case .purge(let target, let record):
            let query = request.target.utf8.firstIndex(of: UInt8(ascii: "?")).map {
                String(request.target[request.target.index(after: $0)...])
            }
            let authorization = request.authorization
            plan(request, context: context) { components in
                await AdminPurge(components: components).answer(
                    target, authorization: authorization, query: query ?? "", body: body, record: record)
            }
            return false
        case .origin(let resolved, let record):
            let verdict = Answer.fillToStart(for: request, resolved: resolved).flatMap { resolved in
                Answer.lookUp(resolved, on: context.eventLoop, components: components)
            }
            if verdict != nil { components.metrics.frontMiss() }
            plan(request, context: context) { components in
                await Answer.origin(resolved, record: record, components: components, verdict: verdict)
            }
            return false
        }
    }

    /// Refuses `request` with `status` and a one-line `reason`, at once.
    /// - Returns: whether the refusal was written (flushed at the end of the round).
    func refuse(
        _ request: ExchangeRequest, _ status: HTTPResponse.Status, _ reason: String, context: ChannelHandlerContext
    ) -> Bool {
        var answer = Answer(
            failure: status, reason: reason,
            record: Answer.record(of: request, originURL: nil, components: components))
        if status == .serviceUnavailable { answer.setField(.retryAfter, to: "1") }
        if status == .methodNotAllowed { answer.setField(.allow, to: "GET, HEAD, OPTIONS") }
        answer.record.cors = .none
        return sendNow(answer, for: request, context: context)
    }

    /// Sends an answer made now.
    private func sendNow(_ answer: Answer, for request: ExchangeRequest, context: ChannelHandlerContext) -> Bool {
        connection.eventLoopAnswerStarted(closing: request.closes)
        guard let body = ChannelBody(of: answer) else {
            refuseDamaged(answer, context: context)
            return false
        }
        send(answer, body: body, closing: request.closes, http10: request.isHTTP10, context: context, isHit: false)
        return true
    }

    /// Plans the answer to `request` with `makeAnswer` on a task that prefers this connection's event loop, then
    /// writes it; the machine holds the requests after it until its end is written.
    func plan(
        _ request: ExchangeRequest, context: ChannelHandlerContext,
        _ makeAnswer: @escaping @Sendable (ServerComponents) async -> Answer
    ) {
        let closing = request.closes
        let http10 = request.isHTTP10
        connection.eventLoopAnswerStarted(closing: closing)
        machine.planStarted(closes: closing)
        let components = components
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        // Runs here until it waits for the origin's head, then on this event loop.
        let task = Task.immediate(executorPreference: EventLoopTaskExecutor(context.eventLoop)) {
            let answer = await makeAnswer(components)
            let (front, context) = bound.value
            await front.write(planned: answer, closing: closing, http10: http10, context: context)
        }
        // Unless it was answered already (a fill that failed before its first wait).
        if machine.planning { planTask = task }
    }

    /// Closes the connection once `written` completes (its output, then its input once drained: ``ConnectionGuard``).
    private func closeWhenWritten(_ written: EventLoopFuture<Void>, context: ChannelHandlerContext) {
        written.assumeIsolated().whenComplete { _ in self.connection.closeAfterAnswers() }
    }

    /// An answer whose entry file was cut short under it: its entries go, and the connection ends (nothing is written:
    /// the player retries and gets a fresh copy).
    func refuseDamaged(_ answer: Answer, context: ChannelHandlerContext) {
        if let url = answer.record.originURL {
            components.logger.warning(
                "damaged cache entry removed", metadata: ["url": "\(SecretRedaction.redact(url))"])
            _ = components.cache.purge(url: components.origin.keys.identity(of: url))
        }
        connection.eventLoopAnswerAbandoned()
        context.close(promise: nil)
    }

    /// Writes a planned answer; on the event loop.
    private func write(planned answer: Answer, closing: Bool, http10: Bool, context: ChannelHandlerContext) async {
        guard context.channel.isActive else {
            // The player left while the origin was asked: nothing to write.
            connection.eventLoopAnswerAbandoned()
            answer.finished(bytes: 0, aborted: ChannelError.ioOnClosedChannel, components: components)
            planEnded(wrote: false, context: context)
            return
        }
        guard case .stream(let body) = answer.body else {
            // A failure's reason, a rendered playlist, a stored entry's file: there to send at once, as a hit's is.
            guard let channelBody = ChannelBody(of: answer) else {
                refuseDamaged(answer, context: context)
                planEnded(wrote: false, context: context)
                return
            }
            planEnded(wrote: true, context: context) {
                send(
                    answer, body: channelBody, closing: closing, http10: http10, context: context, isHit: false,
                    planned: true)
                context.flush()
                cork.off(context.channel)
            }
            return
        }
        // A body of unknown length goes in chunks; to an HTTP/1.0 client, which reads none, it ends with the
        // connection instead.
        let endsWithConnection = http10 && answer.length == nil
        let chunked = answer.length == nil && !http10
        let closing = closing || endsWithConnection
        if endsWithConnection { machine.closesAfterPlan() }
        var head = context.channel.allocator.buffer(capacity: 512)
        answer.writeHead(
            closing: closing, chunked: chunked, http10: http10, delimitedByClose: endsWithConnection,
            connectionLine: cmsdLine(context: context), into: &head)
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
            planEnded(wrote: true, context: context) { finishWhenWritten(failed.futureResult, context: context) }
            failed.fail(failure)
        } else {
            inFlight.append(answer, streamed: sent, connection: connection)
            planEnded(wrote: true, context: context) {
                finishWhenWritten(last.futureResult, context: context)
                // An HTTP/1.0 body of unknown length ends with the connection.
                if endsWithConnection { closeWhenWritten(last.futureResult, context: context) }
            }
        }
    }

    /// The plan is over (`wrote`: its end is written, by `written`, once the machine counts it in flight): the
    /// requests that waited are read, then what else waited goes on.
    private func planEnded(wrote: Bool, context: ChannelHandlerContext, written: () -> Void = {}) {
        planTask = nil
        let drained = machine.planEnded(wrote: wrote)
        written()
        if drained { answersDrained(context: context) }
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
