import HLSCacheTesting
import Synchronization
import Testing

@testable import OriginClient

/// A slow reader slows the transfer down instead of filling memory; a cancelled reader frees it.
@Suite(.timeLimit(.minutes(1))) struct BackpressureTests {
    @Test func aSlowReaderKeepsTheBufferBounded() async throws {
        let limit = 256 << 10
        let size = 8 << 20
        try await StreamOrigin.withRunning { origin in
            let client = try makeClient { $0.maxBufferedBytesPerTransfer = limit }
            defer { client.shutdown() }
            let response = try await client.fetch(OriginRequest(url: origin.url("/bytes/\(size)")))
            var offset = 0
            var mismatches = 0
            var peak = 0
            var chunks = 0
            for try await chunk in response.body {
                for (index, byte) in chunk.enumerated() where byte != StreamOrigin.patternByte(at: offset + index) {
                    mismatches += 1
                }
                offset += chunk.count
                chunks += 1
                if chunks % 8 == 0 {
                    // Slow: the origin could send the whole body many times over meanwhile.
                    try await Task.sleep(for: .milliseconds(5))
                }
                peak = max(peak, client.bufferedBytes)
            }
            #expect(offset == size)
            #expect(mismatches == 0)
            // At most the limit plus one curl chunk, although the reader lagged far behind.
            #expect(peak <= limit + EasyTransfer.receiveBufferBytes, "peak \(peak)")
            #expect(peak >= limit / 2, "the reader should have lagged enough to fill the buffer (peak \(peak))")
            #expect(client.bufferedBytes == 0)
        }
    }

    @Test func cancellingTheReaderMidBodyFreesTheTransfer() async throws {
        let sawClose = Flag()
        let origin = try RawOrigin { _, connection in
            connection.readRequest()
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 104857600\r\n\r\n")
            connection.send([UInt8](repeating: 0x46, count: 64 << 10))
            if connection.waitForPeerClose(timeout: .seconds(20)) {
                sawClose.set()
            }
        }
        defer { origin.stop() }
        let client = try makeClient()
        defer { client.shutdown() }
        let response = try await client.fetch(OriginRequest(url: "\(origin.base)/big.ts"))
        let readSome = Flag()
        let reader = Task {
            var iterator = response.body.makeAsyncIterator()
            while let _ = try await iterator.next() {
                readSome.set()
            }
        }
        #expect(await readSome.wait(timeout: .seconds(10)))
        #expect(client.activeTransfers == 1)
        reader.cancel()
        let result = await reader.result
        #expect(throws: OriginError.self) { try result.get() }
        #expect(await sawClose.wait(timeout: .seconds(10)), "the origin should see the connection close")
        #expect(try await eventually { client.activeTransfers == 0 })
        #expect(client.bufferedBytes == 0)
    }

    @Test func droppingAnUnreadResponseFreesTheTransfer() async throws {
        let sawClose = Flag()
        let origin = try RawOrigin { _, connection in
            connection.readRequest()
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 104857600\r\n\r\n")
            connection.send([UInt8](repeating: 0x47, count: 4 << 20))
            if connection.waitForPeerClose(timeout: .seconds(20)) {
                sawClose.set()
            }
        }
        defer { origin.stop() }
        let client = try makeClient()
        defer { client.shutdown() }
        do {
            let response = try await client.fetch(OriginRequest(url: "\(origin.base)/big.ts"))
            #expect(response.status == 200)
        }
        #expect(await sawClose.wait(timeout: .seconds(10)), "the origin should see the connection close")
        #expect(try await eventually { client.activeTransfers == 0 && client.bufferedBytes == 0 })
    }

    @Test func cancellingTheFetchBeforeTheHeadFreesTheTransfer() async throws {
        let sawClose = Flag()
        let origin = try RawOrigin { _, connection in
            connection.readRequest()
            if connection.waitForPeerClose(timeout: .seconds(20)) {
                sawClose.set()
            }
        }
        defer { origin.stop() }
        let client = try makeClient()
        defer { client.shutdown() }
        let fetch = Task {
            try await client.fetch(OriginRequest(url: "\(origin.base)/seg.ts"))
        }
        #expect(try await eventually { origin.connectionCount == 1 })
        fetch.cancel()
        let result = await fetch.result
        let error = #expect(throws: OriginError.self) { try result.get() }
        #expect(error?.kind == .cancelled)
        #expect(await sawClose.wait(timeout: .seconds(10)))
        #expect(try await eventually { client.activeTransfers == 0 })
    }
}
