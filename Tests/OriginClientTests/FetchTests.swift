import ByteRanges
import HLSCacheTesting
import Synchronization
import Testing

@testable import OriginClient

/// Fetches against the in-process Hummingbird origin on 127.0.0.1.
@Suite(.timeLimit(.minutes(2))) struct FetchTests {
    @Test func hundredConcurrentFetchesOfTwoMebibytesArriveIntact() async throws {
        let size = 2 << 20
        try await StreamOrigin.withRunning { origin in
            // 200 MB checked a byte at a time in a debug build, on a machine the rest of the suite loads too: the
            // first byte of the last fetches may wait longer than the default 15 s.
            let client = try makeClient { $0.timeouts.firstByte = .seconds(60) }
            defer { client.shutdown() }
            try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        let response = try await client.fetch(OriginRequest(url: origin.url("/bytes/\(size)")))
                        #expect(response.status == 200)
                        #expect(response.contentLength == Int64(size))
                        return try await readPattern(response.body)
                    }
                }
                var fetches = 0
                for try await (count, mismatches) in group {
                    #expect(count == size)
                    #expect(mismatches == 0)
                    fetches += 1
                }
                #expect(fetches == 100)
            }
            #expect(try await eventually { client.activeTransfers == 0 })
            #expect(client.bufferedBytes == 0)
        }
    }

    @Test(arguments: [404, 500])
    func errorStatusesAreReportedWithTheirStatus(code: Int) async throws {
        try await StreamOrigin.withRunning { origin in
            let client = try makeClient()
            defer { client.shutdown() }
            let url = origin.url("/status/\(code)")
            let response = try await client.fetch(OriginRequest(url: url))
            #expect(response.status == code)
            #expect(!response.isSuccess)
            #expect(try await response.body.collect(upTo: 1024) == Array("status \(code)".utf8))
            let error = #expect(throws: OriginError.self) { try response.checkStatus() }
            #expect(error?.kind == .httpStatus)
            #expect(error?.status == code)
            #expect(error?.description == "origin returned \(code) for \(url)")
            #expect(origin.count("/status/\(code)") == 1, "no retry on \(code)")
        }
    }

    @Test func aGetIsRetriedOnceOnServiceUnavailable() async throws {
        try await StreamOrigin.withRunning { origin in
            let client = try makeClient()
            defer { client.shutdown() }
            let recovered = try await client.fetch(OriginRequest(url: origin.url("/flaky/a"))).checkStatus()
            #expect(try await recovered.body.collect(upTo: 1024) == Array("recovered".utf8))
            #expect(origin.count("/flaky/a") == 2)

            let unavailable = try await client.fetch(OriginRequest(url: origin.url("/status/503")))
            #expect(unavailable.status == 503)
            #expect(origin.count("/status/503") == 2, "retried once, not more")
        }
    }

    @Test func requestHeadersCarryUserAgentExtraHeadersAndRange() async throws {
        try await StreamOrigin.withRunning { origin in
            let client = try makeClient { $0.extraHeaders = [("X-Token", "secret"), ("Referer", "https://app.test/")] }
            defer { client.shutdown() }
            let request = OriginRequest(
                url: origin.url("/headers"), range: ByteRange(offset: 10, length: 10),
                headers: [("X-Request", "1")])
            let response = try await client.fetch(request)
            let text = String(decoding: try await response.body.collect(upTo: 65536), as: UTF8.self)
            let lines = Set(text.split(separator: "\n").map { $0.lowercased() })
            #expect(lines.contains("user-agent: hlscache/\(hlscacheVersion)"))
            #expect(lines.contains("x-token: secret"))
            #expect(lines.contains("referer: https://app.test/"))
            #expect(lines.contains("x-request: 1"))
            #expect(lines.contains("range: bytes=10-19"))
            #expect(lines.contains("accept-encoding: identity"), "an encoded body was not refused up front")
        }
    }

    @Test func gzipIsAcceptedWhenAskedAndDecodedEvenWhenNot() async throws {
        try await StreamOrigin.withRunning { origin in
            let client = try makeClient()
            defer { client.shutdown() }
            let response = try await client.fetch(OriginRequest(url: origin.url("/gzip"), acceptEncoding: true))
            #expect(try await response.body.collect(upTo: 1024) == Array("hello, gzip\n".utf8))
            #expect(response.header("content-encoding") == nil)
            #expect(response.contentLength == nil)
            #expect(response.header("Content-Type") == "application/vnd.apple.mpegurl")

            // Asked for identity, sent gzip anyway: decoded all the same, never passed on as the object's bytes.
            let unasked = try await client.fetch(OriginRequest(url: origin.url("/gzip")))
            #expect(try await unasked.body.collect(upTo: 1024) == Array("hello, gzip\n".utf8))
            #expect(unasked.header("content-encoding") == nil)
            #expect(unasked.contentLength == nil)
        }
    }

    @Test func aRequestRefusedBeforeResolvingNeverReachesTheWorker() async throws {
        let client = try makeClient(allowedHosts: ["*.example.com"])
        defer { client.shutdown() }
        let error = await #expect(throws: OriginError.self) {
            _ = try await client.fetch(OriginRequest(url: "http://127.0.0.1:9/x"))
        }
        #expect(error?.kind == .refused)
        #expect(client.activeTransfers == 0)
    }

    @Test func aShutDownClientRefusesNewFetches() async throws {
        let client = try makeClient()
        client.shutdown()
        client.shutdown()
        let error = await #expect(throws: OriginError.self) {
            _ = try await client.fetch(OriginRequest(url: "http://127.0.0.1:9/x"))
        }
        #expect(error?.kind == .shutDown)
    }

    @Test func invalidConfigurationsAreRejected() {
        var configuration = OriginClientConfiguration()
        configuration.timeouts.stall = .zero
        let error = #expect(throws: OriginError.self) { _ = try OriginClient(configuration: configuration) }
        #expect(error?.kind == .invalidConfiguration)
    }
}
