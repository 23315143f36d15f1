import Foundation
import HLSCacheTesting
import Testing

/// Grace: an expired playlist is answered from the stale copy at once while one refresh runs, so players never wait
/// on a slow or dead origin for what the cache holds.
@Suite("Grace")
struct GraceTests {
    static let playlist = "/live/index.m3u8"

    @Test("origin slow: 20 pollers over two target durations get the stale playlist at once; one refresh in all")
    func slowOriginServesStaleAtOnce() async throws {
        try await withServer(arguments: ["--prefetch", "0"]) { server, origin in
            let url = server.proxied(origin.url(Self.playlist))
            let first = try await TestHTTP.get(url)
            #expect(first.status == 200 && first.header("x-cache") == "MISS")
            // Live freshness is half the target duration (1 s): let it expire, then make the origin take 8 s. The
            // stale copy may be served up to three target durations (6 s) after it was fetched.
            try await Task.sleep(for: .milliseconds(1200))
            origin.set(Self.playlist, .delay(.seconds(8)))
            let fetchesBefore = origin.count(Self.playlist)

            let started = Date()
            var slowest = 0.0
            var results: [String] = []
            while Date().timeIntervalSince(started) < 4 {
                let round = try await withThrowingTaskGroup(of: (Double, Int, String, String?).self) { group in
                    for _ in 0..<20 {
                        group.addTask {
                            let sent = Date()
                            let answer = try await TestHTTP.get(url)
                            return (
                                Date().timeIntervalSince(sent), answer.status, answer.header("x-cache") ?? "",
                                answer.header("age")
                            )
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                for (seconds, status, cache, age) in round {
                    slowest = max(slowest, seconds)
                    #expect(status == 200)
                    #expect(cache == "STALE" && age != nil, "\(cache) \(age ?? "no Age")")
                    results.append(cache)
                }
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(results.count >= 40, "fewer than two rounds in two target durations")
            // The refresh waits at most 0.5 s; the rest is this 2-core machine's scheduling, well below the 8 s the
            // origin takes.
            #expect(slowest < 4, "a poller waited \(slowest) s")
            #expect(origin.count(Self.playlist) - fetchesBefore == 1, "more than one refresh ran at once")

            // The slow refresh lands: the next answers are the new version, and it was the only origin request.
            var refreshed = false
            let deadline = Date().addingTimeInterval(20)
            while !refreshed, Date() < deadline {
                let cache = try await TestHTTP.get(url).header("x-cache")
                refreshed = cache == "HIT" || cache == "MISS"
                if !refreshed { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(refreshed, "the playlist was never refreshed")
            #expect(origin.count(Self.playlist) - fetchesBefore <= 2, "refreshes piled up")
        }
    }

    @Test("a VOD playlist past its grace waits for the origin again; within it, it does not")
    func graceEndsForVOD() async throws {
        try await withServer(arguments: ["--vod-playlist-ttl", "1", "--playlist-grace", "2"]) {
            server, origin in
            let path = "/fmp4/index.m3u8"
            let url = server.proxied(origin.url(path))
            #expect(try await TestHTTP.get(url).status == 200)
            origin.set(path, .delay(.seconds(2)))
            // Past expiry + grace (1 s + 2 s): the request waits for the slow origin.
            try await Task.sleep(for: .milliseconds(3500))
            let waited = Date()
            let refreshed = try await TestHTTP.get(url)
            #expect(refreshed.status == 200 && refreshed.header("x-cache") == "MISS")
            #expect(Date().timeIntervalSince(waited) >= 1.5)
            // Expired again, within its grace: the stale copy at once, while the slow refresh runs.
            try await Task.sleep(for: .milliseconds(1200))
            let sent = Date()
            let graced = try await TestHTTP.get(url)
            #expect(graced.status == 200 && graced.header("x-cache") == "STALE")
            #expect(Date().timeIntervalSince(sent) < 1.8)
        }
    }
}
