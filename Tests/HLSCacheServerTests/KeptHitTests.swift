import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// The hit an event loop keeps for a target (``KeptHit``) and answers again with no lookup while the cache's lease
/// on the entry holds: the same answer a lookup plans, and never past a purge.
@Suite("Kept hits", .sharedMachine)
struct KeptHitTests {
    /// Pipelines `count` GETs of `path` on `connection` and reads their answers: one read of the server's, answered
    /// well within the lease (10 ms).
    private static func pipelined(
        _ count: Int, _ path: String, on connection: RawConnection
    ) throws
        -> [RawConnection.Answer]
    {
        connection.send(String(repeating: RawConnection.request("GET", path), count: count))
        return try (0..<count).map { _ in try connection.readAnswer() }
    }

    /// The headers that are the same for every answer of one entry (not `Date`, not the request's id, and of
    /// `CMSD-Dynamic`, the connection's measure, only the node).
    private static func comparable(_ headers: [String: String]) -> [String: String] {
        headers.filter { !["date", "x-request-id"].contains($0.key) }.mapValues { $0 }
            .merging(headers["cmsd-dynamic"].map { ["cmsd-dynamic": String($0.prefix { $0 != ";" })] } ?? [:]) {
                $1
            }
    }

    @Test(
        "an object hit answered again from its event loop's kept hit has the looked-up hit's head and bytes, from memory and from its file",
        arguments: [10_000, 100_001])
    func keptObjectHitIsTheLookedUpHit(size: Int) async throws {
        try await withServer(arguments: ["--read-ahead", "0"]) { server, origin in
            let path = "/o/http/127.0.0.1:\(origin.port)/large/\(size).ts"
            _ = try await TestHTTP.get(server.url(path))
            try await HitPathTests.waitForEntries(1, on: server)
            let expected = StreamOrigin.pattern(count: size)
            let connection = try RawConnection(port: server.port)
            // The first hit is looked up (and reads a small object into memory); the next ones are kept.
            let first = try await offPool { () -> RawConnection.Answer in
                _ = connection.send(RawConnection.request("GET", path))
                return try connection.readAnswer()
            }
            #expect(first.status == 200 && first.headers["x-cache"] == "HIT" && first.body == expected)
            let before = try await server.metric("hlscache_kept_hits_total")
            var (kept, batches) = (0.0, 0)
            while kept == 0, batches < 5 {
                let answers = try await offPool { try Self.pipelined(6, path, on: connection) }
                batches += 1
                for answer in answers {
                    #expect(answer.status == 200 && answer.body == expected)
                    #expect(Self.comparable(answer.headers) == Self.comparable(first.headers))
                }
                kept = try await server.metric("hlscache_kept_hits_total") - before
            }
            #expect(kept > 0, "no hit of six pipelined was answered from the kept hit")
            // Every answer is a hit counted once, kept or looked up.
            let body = size <= 65_536 ? "memory" : "sendfile"
            #expect(
                try await server.metric("hlscache_event_loop_hits_total{body=\"\(body)\"}") == Double(1 + 6 * batches))
        }
    }

    @Test("a segment the event loops answer again and again is a miss right after its purge")
    func keptObjectHitGivesWayToAPurge() async throws {
        try await withServer(arguments: ["--admin-token", PurgeTests.token, "--read-ahead", "0"]) { server, origin in
            let url = server.proxied(origin.url("/large/100001.ts"))
            #expect(try await PurgeTests.cached(url))
            let fetched = origin.count("/large/100001.ts")
            let answers = try await PurgeTests.hitsThenPurge(url, on: server)
            #expect(answers.map(\.status) == [200, 200, 200, 200])
            #expect(
                [0, 1, 3].map { answers[$0].headers["x-cache"] ?? "" } == ["HIT", "HIT", "MISS"],
                "a kept hit outlived its purge")
            #expect(answers[3].body == StreamOrigin.pattern(count: 100_001))
            #expect(origin.count("/large/100001.ts") == fetched + 1)
        }
    }

    /// The descriptors `server` holds open on files of its cache directory that are gone (unlinked).
    private static func deletedEntryFiles(of server: any RunningServer) -> [String] {
        let descriptors = "/proc/\(server.processIdentifier)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []
        return names.compactMap { name in
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: descriptors + "/" + name)) ?? ""
            return target.hasPrefix(server.cacheDirectory) && target.hasSuffix("(deleted)") ? target : nil
        }
    }

    @Test("a kept hit no request takes is dropped within two seconds: a purged entry's file is not held open")
    func idleKeptHitLetsItsFileGo() async throws {
        try await withServer(arguments: ["--admin-token", PurgeTests.token, "--read-ahead", "0"]) { server, origin in
            let path = "/o/http/127.0.0.1:\(origin.port)/large/100001.ts"
            #expect(try await PurgeTests.cached(server.url(path)))
            let connection = try RawConnection(port: server.port)
            var kept = 0.0
            for _ in 0..<5 where kept == 0 {
                _ = try await offPool { try Self.pipelined(6, path, on: connection) }
                kept = try await server.metric("hlscache_kept_hits_total")
            }
            #expect(kept > 0, "no hit was kept")
            connection.close()
            let purge = try await TestHTTP.send("PURGE", server.url(path), headers: [PurgeTests.bearer])
            #expect(purge.status == 200)
            // The cache lets go of its own descriptor at once; the kept hit's goes at the sweep after next.
            #expect(
                try await eventually(timeout: .seconds(5)) { Self.deletedEntryFiles(of: server).isEmpty },
                "still open: \(Self.deletedEntryFiles(of: server))")
        }
    }
}
