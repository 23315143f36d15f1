import HLSCacheTesting
import Testing

@testable import OriginClient

/// Fetches that start together on one worker thread, to an HTTP/1.1 origin it has no connection to yet, each get a
/// connection of their own at once: none waits for another's body to end.
@Suite(.timeLimit(.minutes(1))) struct ConcurrentFetchTests {
    @Test func fetchesStartedTogetherToANewOriginDoNotWaitForTheFirstBody() async throws {
        // Every request gets its head and a first kilobyte, then the body waits until the client leaves.
        let origin = try holdingOrigin()
        defer { origin.stop() }
        let client = try makeClient { $0.workerThreads = 1 }
        defer { client.shutdown() }
        let fetches = (0..<5).map { index in
            Task { try await client.fetch(OriginRequest(url: "\(origin.base)/held-\(index).ts")) }
        }
        defer { for fetch in fetches { fetch.cancel() } }
        // With curl's PIPEWAIT, the four after the first waited for it to end (to learn whether the origin could
        // multiplex): one connection, for as long as the first body took.
        let connected = try await eventually { origin.connectionCount == 5 }
        #expect(connected, "connections: \(origin.connectionCount)")
        guard connected else { return }
        for fetch in fetches {
            #expect(try await fetch.value.status == 200)
        }
    }
}
