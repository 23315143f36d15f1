import NIOCore

/// In front of the TLS layer: the small writes made between two flushes are packed into buffers of up to one TLS
/// record (16 KiB) before they are encrypted, so they go out as one record, not one record each.
///
/// The TLS layer makes a record of every write it is given. An HTTP/2 answer is three writes (its `HEADERS` frame,
/// its `DATA` frame's 9-byte header, the body); a thousand LL-HLS answers a fill wakes at once were three thousand
/// records, each with its own encryption set-up, 22 bytes of overhead and its own parsing in the client. An HTTP/1
/// answer over TLS is two (its head, its body). Packed, the thousand answers are about a hundred records.
///
/// A write of a record's size or more (a file body's chunks, a `DATA` frame's full body) goes on as it is, after what
/// is packed: copying it would cost more than the record it saves. The order of the bytes never changes; a packed
/// buffer's write completes the promises of every write in it. What is packed and not yet flushed is what the TLS
/// layer would have held unflushed: a close goes on after it, as it would have.
final class TLSRecordPacker: ChannelOutboundHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// The most a TLS record carries (RFC 8446, 5.1): what a packed buffer holds at most.
    static let recordBytes = 16 << 10

    /// The writes packed since the last flush.
    private var packed: ByteBuffer?
    /// Their promises.
    private var promises: [EventLoopPromise<Void>] = []

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(var buffer) = unwrapOutboundIn(data), buffer.readableBytes < Self.recordBytes else {
            writePacked(context: context)
            context.write(data, promise: promise)
            return
        }
        if let held = packed, held.readableBytes + buffer.readableBytes > Self.recordBytes {
            writePacked(context: context)
        }
        if packed == nil { packed = context.channel.allocator.buffer(capacity: Self.recordBytes) }
        packed?.writeBuffer(&buffer)
        if let promise { promises.append(promise) }
    }

    func flush(context: ChannelHandlerContext) {
        writePacked(context: context)
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        writePacked(context: context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Removed with the channel: what was packed is never written.
        packed = nil
        let waiting = promises
        promises = []
        for promise in waiting { promise.fail(ChannelError.ioOnClosedChannel) }
    }

    /// Hands what is packed on as one write, whose completion completes every promise of the writes in it.
    private func writePacked(context: ChannelHandlerContext) {
        guard let buffer = packed else { return }
        packed = nil
        let promise: EventLoopPromise<Void>?
        switch promises.count {
        case 0:
            promise = nil
        case 1:
            promise = promises[0]
            promises.removeAll(keepingCapacity: true)
        default:
            let waiting = promises
            promises.removeAll(keepingCapacity: true)
            let all = context.eventLoop.makePromise(of: Void.self)
            all.futureResult.whenComplete { result in
                for promise in waiting { promise.completeWith(result) }
            }
            promise = all
        }
        context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: promise)
    }
}
