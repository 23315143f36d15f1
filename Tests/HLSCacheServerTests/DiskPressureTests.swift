import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// A full disk under the cache: the cache keeps caching within what the file system holds.
@Suite("Disk pressure", .sharedMachine)
struct DiskPressureTests {
    @Test(
        "on a 20 MB file system with the default 10 GB bound, a 30 MB stream is cached as it plays; one warning",
        .enabled(if: SmallFileSystem.isAvailable, "needs root to mount a tmpfs"))
    func fullDiskKeepsCaching() async throws {
        try await SmallFileSystem.withMounted(megabytes: 20) { directory in
            try await StreamOrigin.withRunning { origin in
                let server = try await InProcessServer.start(
                    cacheDirectory: directory + "/cache",
                    arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0", "--memory-cache-size", "1MB"])
                let objects = (0..<30).map { "/large/\(1_000_000 + $0).ts" }
                for path in objects {
                    let answer = try await TestHTTP.get(server.proxied(origin.url(path)))
                    #expect(answer.status == 200 && answer.header("x-cache") == "MISS", "\(path)")
                }
                // Played again from the newest: the most recent ten are in the cache, not passed through.
                var hits = 0
                for path in objects.reversed() {
                    let answer = try await TestHTTP.get(server.proxied(origin.url(path)))
                    #expect(answer.status == 200)
                    if answer.header("x-cache") == "HIT" { hits += 1 }
                }
                let newest = objects.suffix(10).map { origin.count($0) }
                #expect(newest.allSatisfy { $0 == 1 }, "the newest objects were not kept: \(newest)")
                #expect(hits >= 10, "\(hits) hits")
                let log = server.log
                let floods = log.components(separatedBy: "No space left on device").count - 1
                let episodes = log.components(separatedBy: "file system is full").count - 1
                #expect(floods <= 2, "\(floods) ENOSPC warnings")
                #expect(episodes >= 1 && episodes <= 4, "\(episodes) full-disk warnings")
                let evictions = try await server.metric("hlscache_cache_disk_full_evictions_total")
                #expect(evictions > 0)
                await server.stop()
            }
        }
    }
}
