import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import NIOCore
import NIOEmbedded
import Testing

@testable import HLSCacheServer

/// What reaches the TLS layer: small writes packed into whole records (``TLSRecordPacker``), file regions read a chunk
/// at a time (``FileRegionReader``).
@Suite("Writes behind TLS", .sharedMachine)
struct TLSWritesTests {
    @Test("the small writes of one flush reach the TLS layer as one buffer, in order, and every promise completes")
    func smallWritesArePacked() throws {
        let channel = EmbeddedChannel(handlers: [TLSRecordPacker()])
        let promises = (0..<3).map { _ in channel.eventLoop.makePromise(of: Void.self) }
        for (index, text) in ["HEADERS", "DATA-head", "body"].enumerated() {
            channel.write(IOData.byteBuffer(ByteBuffer(string: text)), promise: promises[index])
        }
        // Held until the flush: what the TLS layer would have held unflushed.
        #expect(try channel.readOutbound(as: IOData.self) == nil)
        channel.flush()
        #expect(try outbound(channel) == ["HEADERSDATA-headbody"])
        for promise in promises { try promise.futureResult.wait() }
        _ = try channel.finish()
    }

    @Test("no packed buffer is more than a record; a write of a record or more goes on as it is, after what is packed")
    func recordsAndLargeWrites() throws {
        let channel = EmbeddedChannel(handlers: [TLSRecordPacker()])
        let piece = String(repeating: "a", count: 10_000)
        channel.write(IOData.byteBuffer(ByteBuffer(string: piece)), promise: nil)
        channel.write(IOData.byteBuffer(ByteBuffer(string: piece)), promise: nil)
        channel.write(IOData.byteBuffer(ByteBuffer(string: "head")), promise: nil)
        let large = String(repeating: "b", count: TLSRecordPacker.recordBytes)
        channel.write(IOData.byteBuffer(ByteBuffer(string: large)), promise: nil)
        channel.write(IOData.byteBuffer(ByteBuffer(string: "tail")), promise: nil)
        channel.flush()
        #expect(try outbound(channel) == [piece, piece + "head", large, "tail"])
        _ = try channel.finish()
    }

    @Test(
        "a body of 16 KiB regions (an HTTP/2 answer's frames) is read whole and flushed a chunk at a time, not per region"
    )
    func regionsAreFlushedAChunkAtATime() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hlscache-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let bytes = (0..<(7 * 16_384)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let path = directory.appendingPathComponent("body").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let handle = try NIOFileHandle(_deprecatedPath: path)
        defer { try? handle.close() }
        let flushes = FlushCounter()
        let channel = EmbeddedChannel(handlers: [flushes, FileRegionReader()])
        let end = channel.eventLoop.makePromise(of: Void.self)
        for index in 0..<7 {
            let region = FileRegion(fileHandle: handle, readerIndex: index * 16_384, endIndex: (index + 1) * 16_384)
            channel.write(IOData.fileRegion(region), promise: index == 6 ? end : nil)
        }
        channel.flush()
        try end.futureResult.wait()
        var received: [UInt8] = []
        while let data = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = data else { Issue.record("a region reached the TLS layer"); break }
            received += buffer.readableBytesView
        }
        #expect(received == bytes)
        // 112 KiB: one flush at 64 KiB, one at the end (and the flush that asked), not one per region.
        #expect(flushes.count <= 3, "\(flushes.count) flushes")
        _ = try channel.finish()
    }
}

/// The buffers written through `channel`, as text.
private func outbound(_ channel: EmbeddedChannel) throws -> [String] {
    var texts: [String] = []
    while let data = try channel.readOutbound(as: IOData.self) {
        guard case .byteBuffer(let buffer) = data else { continue }
        texts.append(String(buffer: buffer))
    }
    return texts
}

/// In front of the handler under test, where the TLS layer would be: counts the flushes that reach it.
private final class FlushCounter: ChannelOutboundHandler {
    typealias OutboundIn = IOData
    private(set) var count = 0

    func flush(context: ChannelHandlerContext) {
        count += 1
        context.flush()
    }
}
