import HTTPTypes
import NIOCore
import NIOHPACK
import NIOHTTP2
import RequestHeads
import SegmentCache

/// One HTTP/2 stream (``HTTP2Streams`` makes one per stream and feeds it the stream's frames): one exchange of the
/// same engine as an HTTP/1 request's. Its head becomes an ``ExchangeRequest`` (``DecodedHead/init(http2:)``),
/// resolved through the same memo, answered from the same hit path, routed by the same
/// ``Answer/route(_:resolution:record:components:)`` and planned by the same
/// ``Answer/origin(_:record:components:verdict:)``; only the writing differs: `HEADERS` from the answer's fields,
/// then `DATA` (a buffer, a file region, or the fill's chunks as they come, at most two of them handed to the framing
/// layer and not yet on the wire, which holds them while the stream's flow-control window is shut). A stream the
/// client resets ends its writer; the fill goes on for the cache.
///
/// Every call comes on the connection's event loop, with the context of its ``HTTP2Streams``.
///
/// A request body (a purge's form) is read up to ``maxBodyBytes``.
final class HTTP2Exchange: ParkingHandler {
    /// The most request-body bytes read (a purge's form is a few hundred).
    static let maxBodyBytes = 64 << 10

    /// The stream's number.
    let streamID: HTTP2StreamID
    /// The connection's streams, which write the frames. Not retained: they outlive every write, since nothing is
    /// written once the stream is closed (``isOpen``), and ``HTTP2Streams`` closes each exchange when the connection
    /// goes inactive, before its handlers are removed.
    private unowned let streams: HTTP2Streams
    private let components: ServerComponents
    private var head: HPACKHeaders?
    private var body: ByteBuffer?
    private var started = false
    /// Whether the stream is open: until it closes (answered and ended both ways, reset, or gone with the
    /// connection), ``closed()``.
    private(set) var isOpen = true
    /// The LL-HLS blocking reload parked on this stream, if it is (``park(_:_:context:)``).
    private var parked: ParkedRequest?
    /// The parking's numbering and its rendering wait (one parking per stream, as per HTTP/1 connection).
    private var parking = ReloadParking()
    /// What is left of a file body to write, a slice at a time as the stream takes them, and the promise of its end.
    private var pendingFile: (region: FileRegion, end: EventLoopPromise<Void>)?
    /// Slices of it handed to the framing layer whose write has not completed.
    private var slicesWriting = 0
    /// The most slices written and not yet on the wire, per stream.
    static let slicesInFlight = 2

    /// The most of a file body handed to HTTP/2's framing layer at once (``writeFileSlices(context:)``).
    static let fileSliceBytes = 64 << 10

    /// The stream's connection, for what it measures (its `CMSD-Dynamic`).
    private weak var connection: HTTP2Connection?

    init(
        streamID: HTTP2StreamID, streams: HTTP2Streams, components: ServerComponents, connection: HTTP2Connection?
    ) {
        self.streamID = streamID
        self.streams = streams
        self.components = components
        self.connection = connection
    }

    /// A frame of the stream's: its head (and trailers, which end it too), its body.
    func receive(_ payload: HTTP2Frame.FramePayload, context: ChannelHandlerContext) {
        guard !started else { return }
        switch payload {
        case .headers(let headers):
            if head == nil { head = headers.headers }
            if headers.endStream { start(context: context) }
        case .data(let frame):
            if case .byteBuffer(var bytes) = frame.data {
                guard (body?.readableBytes ?? 0) + bytes.readableBytes <= Self.maxBodyBytes else {
                    started = true
                    refuse(.contentTooLarge, "a request body of more than 64 KiB", context: context)
                    return
                }
                if body == nil { body = context.channel.allocator.buffer(capacity: bytes.readableBytes) }
                body?.writeBuffer(&bytes)
            }
            if frame.endStream { start(context: context) }
        default:
            break
        }
    }

    /// The stream has closed: what is left of a file body is never written, and its end is a failure (its
    /// descriptor goes back); a writer still going stops at its next chunk.
    func closed() {
        isOpen = false
        if let pending = pendingFile {
            pendingFile = nil
            pending.end.fail(ChannelError.ioOnClosedChannel)
        }
    }

    /// Hands `payload` to the framing layer, and flushes it through unless `flush` is `false` (a write of the same
    /// answer follows at once).
    private func write(
        _ payload: HTTP2Frame.FramePayload, context: ChannelHandlerContext, promise: EventLoopPromise<Void>? = nil,
        flush: Bool = true
    ) {
        streams.write(payload, on: streamID, context: context, promise: promise, flush: flush)
    }

    /// Resets the stream (`RST_STREAM`, `CANCEL`): no clean end, so the client cannot take a cut body for a whole
    /// one.
    private func reset(context: ChannelHandlerContext) {
        guard isOpen else { return }
        write(.rstStream(.cancel), context: context)
    }

    /// The request is whole: answered at once when it can be, else planned.
    private func start(context: ChannelHandlerContext) {
        guard !started, let head else { return }
        started = true
        // RFC 9113 section 8.1.1: a body whose length is not the one declared makes the request malformed.
        if let declared = head.first(name: "content-length"), Int(declared) != (body?.readableBytes ?? 0) {
            refuse(
                .badRequest, "a malformed HTTP/2 request: a body whose length is not its content-length",
                context: context)
            return
        }
        let decoded = DecodedHead(http2: head.map { (name: $0.name, value: $0.value) })
        guard case .request(let request) = decoded else {
            if case .refused(let status, let reason) = decoded { refuse(status, reason, context: context) }
            return
        }
        let remembered = Answer.remembered(request, components: components)
        if request.cmcd != nil { CMCDPrefetch.take(request, remembered: remembered, components: components) }
        if let answer = Answer(hitFor: request, remembered: remembered, components: components) {
            components.metrics.frontHit(body: answer.bodyKind)
            send(answer, context: context)
            return
        }
        if park(request, remembered.resolution, context: context) { return }
        let record = Answer.record(of: request, originURL: nil, components: components)
        switch Answer.route(request, resolution: remembered.resolution, record: record, components: components) {
        case .now(let answer):
            send(answer, context: context)
        case .purge(let target, let record):
            let query = request.target.utf8.firstIndex(of: UInt8(ascii: "?")).map {
                String(request.target[request.target.index(after: $0)...])
            }
            let authorization = request.authorization
            let body = self.body
            plan(context: context) { components in
                await AdminPurge(components: components).answer(
                    target, authorization: authorization, query: query ?? "", body: body, record: record)
            }
        case .origin(let resolved, let record):
            let verdict = Answer.fillToStart(for: request, resolved: resolved).flatMap { resolved in
                Answer.lookUp(resolved, on: context.eventLoop, components: components)
            }
            if verdict != nil { components.metrics.frontMiss() }
            plan(context: context) { components in
                await Answer.origin(resolved, record: record, components: components, verdict: verdict)
            }
        }
    }

    /// Parks an LL-HLS blocking reload whose fill is in flight, as ``ConnectionFront`` does: the stream waits with no
    /// task of its own (a thousand on one connection are a thousand waiters of the fill), and its answer once the fill
    /// ends is a hit; planned when the fill's end brings none.
    /// - Returns: `false`: not such a request, or no fill of it in flight (the caller plans it).
    private func park(
        _ request: ExchangeRequest, _ resolution: RequestResolution, context: ChannelHandlerContext
    ) -> Bool {
        guard let resolved = ReloadParking.waitsFor(request, resolution, components: components),
            parking.park(resolved.key, for: self, context: context, components: components)
        else { return false }
        parked = ParkedRequest(request: request, resolved: resolved, since: .now)
        components.metrics.parkedRequest()
        return true
    }

    /// The fill the parked request waited for has ended: its hit is written now; anything else is planned.
    func fillEnded(parking number: Int, batch: WakeBatch, context: ChannelHandlerContext) {
        guard number == parking.number, let parked else { return }
        guard isOpen else {
            // The client reset the stream meanwhile: nothing to answer.
            self.parked = nil
            return
        }
        switch parking.fillEnded(
            parked.request, resolved: parked.resolved, since: parked.since, batch: batch, for: self, context: context,
            components: components)
        {
        case .waiting:
            return
        case .answer(let answer):
            self.parked = nil
            send(answer, context: context)
        case .handOn:
            self.parked = nil
            let record = Answer.record(of: parked.request, originURL: nil, start: parked.since, components: components)
            let resolved = parked.resolved
            plan(context: context) { components in
                await Answer.origin(resolved, record: record, components: components)
            }
        }
    }

    /// Answers with `status` and a one-line reason.
    private func refuse(_ status: HTTPResponse.Status, _ reason: String, context: ChannelHandlerContext) {
        let request = ExchangeRequest(
            method: .get, target: "-", origin: nil, range: nil, via: nil, accessControlRequestHeaders: nil,
            readAhead: nil, authorization: nil, closes: false)
        var answer = Answer(
            failure: status, reason: reason, record: Answer.record(of: request, originURL: nil, components: components))
        answer.record.cors = .none
        send(answer, context: context)
    }

    /// Plans the answer on a task that prefers the stream's event loop, then writes it there.
    private func plan(
        context: ChannelHandlerContext, _ makeAnswer: @escaping @Sendable (ServerComponents) async -> Answer
    ) {
        let components = components
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        Task.immediate(executorPreference: EventLoopTaskExecutor(context.eventLoop)) {
            let answer = await makeAnswer(components)
            let (exchange, context) = bound.value
            await exchange.write(planned: answer, context: context)
        }
    }

    /// The `HEADERS` of `answer`: its status, its fields (names in lowercase, as HTTP/2 wants them), the connection's
    /// `CMSD-Dynamic` (what the kernel measures for the connection's socket, as for an HTTP/1 answer), `date`,
    /// `server`.
    ///
    /// Fields whose values change from answer to answer (``changes(_:)``) are sent without indexing: entered in
    /// the connection's HPACK table, each would push out the entries that do repeat (`content-type`, `server`, the
    /// CORS fields), and every later field's encoding scans the table.
    private func headers(of answer: Answer) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(16)
        headers.add(name: ":status", value: String(answer.status.code))
        for field in answer.headers {
            headers.add(
                name: field.name.canonicalName, value: field.value,
                indexing: Self.changes(field.name) ? .nonIndexable : .indexable)
        }
        if let value = connection?.cmsdDynamic(components: components) {
            headers.add(name: "cmsd-dynamic", value: value, indexing: .nonIndexable)
        }
        ServerFields.forEach(lowercased: true) { name, value in headers.add(name: name, value: value) }
        return headers
    }

    /// Whether the values of an answer's field `name` seldom repeat on a connection. (Compared, not hashed: these
    /// names are small strings, compared as two words; a set's hash of each name was 5% of an answer's time.)
    private static func changes(_ name: HTTPField.Name) -> Bool {
        switch name {
        case .contentLength, .contentRange, .eTag, .lastModified, .age, .xRequestID: true
        default: false
        }
    }

    /// Sends an answer whose body is there (none, a buffer, a file region).
    private func send(_ answer: Answer, context: ChannelHandlerContext) {
        guard let body = ChannelBody(of: answer) else {
            if case .stream = answer.body {
                plan(context: context) { _ in answer }
            } else {
                // An entry file cut short since it was opened: the stream ends; the player asks again.
                answer.finished(bytes: 0, aborted: ChannelError.ioOnClosedChannel, components: components)
                reset(context: context)
            }
            return
        }
        let headers = headers(of: answer)
        let written = context.eventLoop.makePromise(of: Void.self)
        if case .fileRegion(let region) = body.data, region.readableBytes > Self.fileSliceBytes {
            write(.headers(.init(headers: headers)), context: context, flush: false)
            pendingFile = (region, written)
            writeFileSlices(context: context)
        } else if let data = body.data {
            write(.headers(.init(headers: headers)), context: context, flush: false)
            write(.data(.init(data: data, endStream: true)), context: context, promise: written)
        } else {
            write(.headers(.init(headers: headers, endStream: true)), context: context, promise: written)
        }
        let components = components
        written.futureResult.assumeIsolated().whenComplete { result in
            body.writeEnded()
            switch result {
            case .success: answer.finished(bytes: body.bytes, aborted: nil, components: components)
            case .failure(let error): answer.finished(bytes: -1, aborted: error, components: components)
            }
        }
    }

    /// Writes the file body's next slices, ``fileSliceBytes`` each, keeping at most ``slicesInFlight`` of them
    /// handed to the framing layer and not yet on the wire: each one written brings the next. (The connection's
    /// writability would not do: it turns unwritable only once the socket's buffer is full, and by then the framing
    /// layer holds the whole body cut into frames, a few hundred bytes each, 40 MB for 100 streams of 20 MiB.) The
    /// last slice ends the stream and completes the body's promise.
    private func writeFileSlices(context: ChannelHandlerContext) {
        while let pending = pendingFile, slicesWriting < Self.slicesInFlight {
            var region = pending.region
            let length = min(region.readableBytes, Self.fileSliceBytes)
            let slice = FileRegion(
                fileHandle: region.fileHandle, readerIndex: region.readerIndex,
                endIndex: region.readerIndex + length)
            region.moveReaderIndex(forwardBy: length)
            let last = region.readableBytes == 0
            pendingFile = last ? nil : (region, pending.end)
            let data = HTTP2Frame.FramePayload.data(.init(data: .fileRegion(slice), endStream: last))
            if last {
                write(data, context: context, promise: pending.end)
                return
            }
            slicesWriting += 1
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.assumeIsolated().whenComplete { [self] result in
                slicesWriting -= 1
                switch result {
                case .success: writeFileSlices(context: context)
                case .failure(let error):
                    // No clean end: the stream is reset, so the client cannot take a cut body for a whole one.
                    if let pending = pendingFile {
                        pendingFile = nil
                        pending.end.fail(error)
                    }
                    reset(context: context)
                }
            }
            write(data, context: context, promise: written)
        }
    }

    /// Writes a planned answer: at once when its body is there, else its head, then the fill's chunks as they come,
    /// each handed to the framing layer once the one before the last is on the wire (two at most wait for the
    /// stream's flow-control window).
    private func write(planned answer: Answer, context: ChannelHandlerContext) async {
        guard isOpen else {
            // The stream was reset while the origin was asked: nothing to write.
            answer.finished(bytes: 0, aborted: ChannelError.ioOnClosedChannel, components: components)
            return
        }
        guard case .stream(let body) = answer.body else {
            send(answer, context: context)
            return
        }
        write(.headers(.init(headers: headers(of: answer))), context: context)
        var sent: Int64 = 0
        do {
            var chunks = body.makeAsyncIterator()
            var previous: EventLoopFuture<Void>?
            while let chunk = try await chunks.next(isolation: nil) {
                guard isOpen else { throw ChannelError.ioOnClosedChannel }
                if chunk.isEmpty { continue }
                let written = context.eventLoop.makePromise(of: Void.self)
                let data = context.channel.allocator.buffer(bytes: chunk)
                write(.data(.init(data: .byteBuffer(data))), context: context, promise: written)
                sent += Int64(chunk.count)
                // The stream's window is shut (or the connection's): wait until the client takes more.
                try await previous?.get()
                previous = written.futureResult
            }
            if let expected = answer.length, sent != expected {
                throw TruncatedBodyError(
                    url: answer.record.originURL ?? answer.record.path, expected: expected, sent: sent)
            }
            guard isOpen else { throw ChannelError.ioOnClosedChannel }
            let end = context.eventLoop.makePromise(of: Void.self)
            write(.data(.init(data: .byteBuffer(ByteBuffer()), endStream: true)), context: context, promise: end)
            try await end.futureResult.get()
            answer.finished(bytes: sent, aborted: nil, components: components)
        } catch {
            // No clean end: the stream is reset, so the client cannot take a cut body for a whole one.
            reset(context: context)
            answer.finished(bytes: sent, aborted: error, components: components)
        }
    }
}
