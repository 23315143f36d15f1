import NIOCore

/// How ``ConnectionFront`` writes its answers: heads as bytes with small bodies inlined, file regions corked behind their
/// head, one flush at the end of the event loop's round.
extension ConnectionFront {
    /// Writes an answer as bytes: the head, with a small body in the same buffer; a larger one or a file region
    /// after it. Finishes its access record once the last byte is written or the connection fails. The caller
    /// flushes.
    /// - Parameters:
    ///   - isHit: whether it is counted as a hit answered at once.
    ///   - http10: whether the request was HTTP/1.0.
    ///   - planned: whether it is a planned answer's, which the machine counted in flight when the plan ended.
    func send(
        _ answer: Answer, body: ChannelBody, closing: Bool, http10: Bool, context: ChannelHandlerContext,
        isHit: Bool = true, planned: Bool = false
    ) {
        if !planned { machine.answerWritten(closes: closing) }
        var inlined: ByteBuffer?
        var rest = body.data
        if case .byteBuffer(let buffer) = rest, buffer.readableBytes <= Self.inlineBodyLimit {
            inlined = buffer
            rest = nil
        }
        var head = context.channel.allocator.buffer(capacity: 512 + (inlined?.readableBytes ?? 0))
        answer.writeHead(closing: closing, http10: http10, connectionLine: cmsdLine(context: context), into: &head)
        if var inlined { head.writeBuffer(&inlined) }
        let written = context.eventLoop.makePromise(of: Void.self)
        if let rest {
            if case .fileRegion = rest {
                cork.on(context.channel)
                fileQueued = true
            }
            context.write(wrapOutboundOut(.byteBuffer(head)), promise: nil)
            context.write(wrapOutboundOut(rest), promise: written)
        } else {
            context.write(wrapOutboundOut(.byteBuffer(head)), promise: written)
        }
        if isHit { components.metrics.frontHit(body: answer.bodyKind) }
        inFlight.append(answer, body: body, connection: connection)
        if body.isFile {
            fileWatch.start(
                context: context, components: components, damagedFile: { [weak self] in self?.inFlight.damagedFile() },
                isSending: { [weak self] in self?.inFlight.isSendingFile ?? false })
        }
        finishWhenWritten(written.futureResult, context: context)
    }

    /// When `written` (the last write of the answer last put in ``inFlight``) completes: the answer is finished, then
    /// what waited for our answers goes on.
    func finishWhenWritten(_ written: EventLoopFuture<Void>, context: ChannelHandlerContext) {
        written.assumeIsolated().whenComplete { result in
            guard let answer = self.inFlight.popOldest() else { return }
            answer.finish(result, components: self.components)
            if self.machine.answerCompleted() { self.answersDrained(context: context) }
            answer.tell(self.connection)
        }
    }

    /// Flushes our answers at the end of the event loop's round, once.
    func flushAtEndOfRound(context: ChannelHandlerContext) {
        guard !flushAsked else { return }
        flushAsked = true
        EventLoopFlushes.flush(self, context: context)
    }

    func roundEnded(context: ChannelHandlerContext) {
        flushAsked = false
        fileQueued = false
        context.flush()
        cork.off(context.channel)
        // A file answer queued by the flush's own completions (a request that waited for the socket) goes out with
        // the next round's flush: corked again for it.
        if fileQueued { cork.on(context.channel) }
    }

    /// The largest body copied into its head's buffer (one write instead of two).
    static let inlineBodyLimit = 16 << 10
}
