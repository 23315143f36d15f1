import HLSCacheTesting
import Testing

@testable import OriginClient

#if canImport(Glibc)
import Glibc
#endif

/// Misbehaving origins, written with plain POSIX sockets on 127.0.0.1.
@Suite(.timeLimit(.minutes(1))) struct TransportFailureTests {
    private static let pattern500 = [UInt8](repeating: 0x41, count: 500)

    @Test func anOriginClosingEarlyGivesATruncatedBodyNeverAShortSuccess() async throws {
        let origin = try RawOrigin { _, connection in
            connection.readRequest()
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
            connection.send(Self.pattern500)
            connection.close()
        }
        defer { origin.stop() }
        let client = try makeClient()
        defer { client.shutdown() }
        let response = try await client.fetch(OriginRequest(url: "\(origin.base)/seg.ts"))
        #expect(response.contentLength == 1000)
        let (count, error) = await drain(response.body)
        #expect(count <= 500)
        #expect((error as? OriginError)?.kind == .truncatedBody)
    }

    @Test func anOriginResettingMidBodyGivesATruncatedBody() async throws {
        let origin = try RawOrigin { _, connection in
            connection.readRequest()
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
            connection.send([UInt8](repeating: 0x42, count: 100_000))
            connection.reset()
        }
        defer { origin.stop() }
        let client = try makeClient()
        defer { client.shutdown() }
        let response = try await client.fetch(OriginRequest(url: "\(origin.base)/seg.ts"))
        let (count, error) = await drain(response.body)
        #expect(count < 1_000_000)
        #expect((error as? OriginError)?.kind == .truncatedBody)
        // Not retried: the response had already been handed over.
        #expect(origin.connectionCount == 1)
    }

    @Test func aChunkedBodyCutShortGivesATruncatedBody() async throws {
        let origin = try RawOrigin { _, connection in
            connection.readRequest()
            connection.send("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
            connection.close()
        }
        defer { origin.stop() }
        let client = try makeClient()
        defer { client.shutdown() }
        let response = try await client.fetch(OriginRequest(url: "\(origin.base)/live.m3u8"))
        #expect(response.contentLength == nil)
        let (_, error) = await drain(response.body)
        #expect((error as? OriginError)?.kind == .truncatedBody)
    }

    @Test func aStalledOriginTripsTheStallTimeoutWithinItsBound() async throws {
        let origin = try RawOrigin { _, connection in
            connection.readRequest()
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789")
            _ = connection.waitForPeerClose(timeout: .seconds(20))
        }
        defer { origin.stop() }
        let client = try makeClient { $0.timeouts.stall = .milliseconds(500) }
        defer { client.shutdown() }
        let start = ContinuousClock.now
        let response = try await client.fetch(OriginRequest(url: "\(origin.base)/seg.ts"))
        let (count, error) = await drain(response.body)
        let elapsed = ContinuousClock.now - start
        #expect(count == 10)
        #expect(elapsed >= .milliseconds(500), "fired after \(elapsed), before the stall timeout")
        let originError = error as? OriginError
        #expect(originError?.kind == .timeout)
        #expect(originError?.timeoutKind == .stall)
        // Allow for a busy machine: the tests run in parallel.
        // The awaiting task may wait for a pool thread while other suites run on 2 cores; the timeout kind
        // (stall, not total) shows the right timer fired.
        #expect(elapsed < .seconds(10), "fired after \(elapsed)")
        #expect(try await eventually { client.activeTransfers == 0 })
    }

    @Test func aSilentOriginTripsTheFirstByteTimeout() async throws {
        let origin = try RawOrigin { _, connection in
            connection.readRequest()
            _ = connection.waitForPeerClose(timeout: .seconds(20))
        }
        defer { origin.stop() }
        let client = try makeClient { $0.timeouts.firstByte = .milliseconds(400) }
        defer { client.shutdown() }
        let start = ContinuousClock.now
        let error = await #expect(throws: OriginError.self) {
            _ = try await client.fetch(OriginRequest(url: "\(origin.base)/seg.ts"))
        }
        #expect(error?.timeoutKind == .firstByte)
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(400) && elapsed < .seconds(10), "fired after \(elapsed)")
    }

    @Test func theTotalTimeoutBoundsTheWholeFetch() async throws {
        let origin = try RawOrigin { _, connection in
            connection.readRequest()
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
            // A trickle: never stalls, never ends in time.
            for _ in 0..<200 {
                guard connection.send([0x43]) else { return }
                usleep(50_000)
            }
        }
        defer { origin.stop() }
        let client = try makeClient { $0.timeouts.total = .milliseconds(800) }
        defer { client.shutdown() }
        let response = try await client.fetch(OriginRequest(url: "\(origin.base)/seg.ts"))
        let (_, error) = await drain(response.body)
        #expect((error as? OriginError)?.timeoutKind == .total)
    }

    @Test func aGetIsRetriedOnceAfterAConnectionFailure() async throws {
        let origin = try RawOrigin { number, connection in
            connection.readRequest()
            if number == 1 {
                connection.reset()
            } else {
                connection.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            }
        }
        defer { origin.stop() }
        let client = try makeClient()
        defer { client.shutdown() }
        let response = try await client.fetch(OriginRequest(url: "\(origin.base)/seg.ts"))
        #expect(try await response.body.collect(upTo: 16) == Array("ok".utf8))
        #expect(origin.connectionCount == 2)
    }

    @Test func aHeadIsNotRetried() async throws {
        let origin = try RawOrigin { _, connection in
            connection.readRequest()
            connection.reset()
        }
        defer { origin.stop() }
        let client = try makeClient()
        defer { client.shutdown() }
        let error = await #expect(throws: OriginError.self) {
            _ = try await client.fetch(OriginRequest(url: "\(origin.base)/seg.ts", method: .head))
        }
        #expect(error?.kind == .connectFailure)
        #expect(origin.connectionCount == 1)
    }

    @Test func aHeadReportsTheLengthWithoutABody() async throws {
        let origin = try RawOrigin { _, connection in
            let request = connection.readRequest() ?? ""
            guard request.hasPrefix("HEAD ") else { return }
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        }
        defer { origin.stop() }
        let client = try makeClient()
        defer { client.shutdown() }
        let response = try await client.fetch(OriginRequest(url: "\(origin.base)/seg.ts", method: .head))
        #expect(response.status == 200)
        #expect(response.contentLength == 1000)
        #expect(try await response.body.collect(upTo: 16).isEmpty)
    }

    @Test func aBodyOverTheMaximumIsRefused() async throws {
        let origin = try RawOrigin { _, connection in
            connection.readRequest()
            connection.send("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\n\r\n")
            connection.send([UInt8](repeating: 0x44, count: 5000))
        }
        defer { origin.stop() }
        let client = try makeClient { $0.maxBodyBytes = 4096 }
        defer { client.shutdown() }
        let error = await #expect(throws: OriginError.self) {
            _ = try await client.fetch(OriginRequest(url: "\(origin.base)/seg.ts"))
        }
        #expect(error?.kind == .tooLarge)
    }

    @Test func anUnannouncedBodyOverTheMaximumFailsMidBody() async throws {
        let origin = try RawOrigin { _, connection in
            connection.readRequest()
            connection.send("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
            connection.send([UInt8](repeating: 0x45, count: 50_000))
        }
        defer { origin.stop() }
        let client = try makeClient { $0.maxBodyBytes = 20_000 }
        defer { client.shutdown() }
        let response = try await client.fetch(OriginRequest(url: "\(origin.base)/seg.ts"))
        let (count, error) = await drain(response.body)
        #expect(count <= 20_000)
        #expect((error as? OriginError)?.kind == .tooLarge)
    }
}
