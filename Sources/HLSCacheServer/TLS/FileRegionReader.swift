import Glibc
import NIOCore

/// Behind TLS, a body the front writes as a file region (`sendfile`) must pass through the encryption as bytes: this
/// handler, between the TLS handler and the connection's own, reads each region into buffers of ``chunkSize`` as the
/// channel takes them (never past its write buffer's high-water mark), so a large object costs no more memory than a
/// small one, and writes made after a region wait behind it, in order. A region is read only once a flush asks for it,
/// and what is read is flushed on through the TLS layer a chunk at a time: what that layer holds unflushed never turns
/// the channel unwritable.
///
/// A file that ends before its region does (truncated under us) fails the write and closes the connection: the
/// answer's length was promised, and a short body must not look complete.
final class FileRegionReader: ChannelDuplexHandler {
    typealias InboundIn = NIOAny
    typealias InboundOut = NIOAny
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Bytes read from a file at a time.
    static let chunkSize = 64 << 10

    private var pending = CircularBuffer<(data: IOData, promise: EventLoopPromise<Void>?)>()
    /// How far into the first pending region the reading got.
    private var regionOffset = 0
    /// Whether a flush was asked for since the pending writes began.
    private var flushAsked = false
    private var pumping = false
    /// Bytes read from regions and written since the last flush.
    private var unflushedBytes = 0

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let io = unwrapOutboundIn(data)
        if pending.isEmpty, case .byteBuffer = io {
            context.write(data, promise: promise)
            return
        }
        // Read only once flushed: the TLS layer holds what is not flushed without the channel turning unwritable.
        pending.append((io, promise))
    }

    func flush(context: ChannelHandlerContext) {
        flushAsked = true
        pump(context: context)
        context.flush()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { pump(context: context) }
        context.fireChannelWritabilityChanged()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        failAll(ChannelError.ioOnClosedChannel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    /// Writes what is pending, reading regions as far as the channel takes them.
    private func pump(context: ChannelHandlerContext) {
        guard !pumping, flushAsked else { return }
        pumping = true
        defer { pumping = false }
        var wrote = false
        while let first = pending.first {
            switch first.data {
            case .byteBuffer:
                pending.removeFirst()
                context.write(wrapOutboundOut(first.data), promise: first.promise)
                wrote = true
            case .fileRegion(let region):
                guard context.channel.isWritable else {
                    if wrote { flushRead(context: context) }
                    return
                }
                let remaining = region.readableBytes - regionOffset
                guard remaining > 0 else {
                    pending.removeFirst()
                    regionOffset = 0
                    first.promise?.succeed()
                    continue
                }
                var buffer = context.channel.allocator.buffer(capacity: min(remaining, Self.chunkSize))
                let count: Int
                do {
                    count = try Self.read(region, at: regionOffset, upTo: min(remaining, Self.chunkSize), into: &buffer)
                } catch {
                    pending.removeFirst()
                    regionOffset = 0
                    first.promise?.fail(error)
                    context.close(promise: nil)
                    return
                }
                regionOffset += count
                if regionOffset == region.readableBytes {
                    pending.removeFirst()
                    regionOffset = 0
                    context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: first.promise)
                } else {
                    context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: nil)
                }
                // What was read goes on through the TLS layer once it makes a chunk: what that layer holds unflushed
                // never turns the channel unwritable, and the whole region would be read. (Not each region's bytes at
                // once: an HTTP/2 body comes as a region per frame, 16 KiB, and a flush each was a write each.)
                unflushedBytes += count
                if unflushedBytes >= Self.chunkSize {
                    flushRead(context: context)
                    wrote = false
                } else {
                    wrote = true
                }
            }
        }
        // Everything asked for is written: the next writes wait for their own flush.
        flushAsked = false
        if wrote { flushRead(context: context) }
    }

    private func flushRead(context: ChannelHandlerContext) {
        context.flush()
        unflushedBytes = 0
    }

    /// Reads up to `count` bytes of `region`, `offset` bytes into it.
    private static func read(
        _ region: FileRegion, at offset: Int, upTo count: Int, into buffer: inout ByteBuffer
    ) throws -> Int {
        try region.fileHandle.withUnsafeFileDescriptor { descriptor in
            try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { bytes in
                while true {
                    let read = pread(descriptor, bytes.baseAddress, count, off_t(region.readerIndex + offset))
                    if read > 0 { return read }
                    if read < 0, errno == EINTR { continue }
                    throw IOError(errnoCode: read < 0 ? errno : EIO, reason: "the file ended before its region")
                }
            }
        }
    }

    private func failAll(_ error: any Error) {
        while let item = pending.popFirst() { item.promise?.fail(error) }
        regionOffset = 0
    }
}
