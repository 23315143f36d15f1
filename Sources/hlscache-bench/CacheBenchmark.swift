import Foundation
import SegmentCache

/// `hlscache-bench cache`: the segment cache's figures, with an in-process source.
///
/// - `cache_open_100k_ms`: opening a directory of 100,000 entries after a clean close (the saved index);
/// - `cache_open_100k_scan_ms`: the same directory after a crash (no saved index: a directory scan);
/// - `cache_hit_read_gbps`: a 2 MiB object read 1,000 times in-process (`fetch` and its body);
/// - `singleflight_origin_fetches`: origin fetches for 100 concurrent requests of one cold key (must be 1).
enum CacheBenchmark {
    /// A source that answers every key with `size` bytes, slowly enough that concurrent requests overlap.
    struct SyntheticSource: ObjectSource {
        let size: Int
        let delay: Duration

        func fetch(_ key: CacheKey) async throws -> SourceResponse {
            try await Task.sleep(for: delay)
            let body = [UInt8](repeating: UInt8(truncatingIfNeeded: key.url.utf8.count), count: size)
            return SourceResponse(
                contentType: "video/mp2t", contentLength: Int64(size), body: SourceBody(chunks: [body]))
        }
    }

    static func run() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hlscache-bench-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await openFigures(directory: root + "/open")
        try await hitReadFigure(directory: root + "/hit")
        try await singleFlightFigure(directory: root + "/flight")
    }

    static func openFigures(directory: String) async throws {
        let entries = 100_000
        let populate = try SegmentCache(
            configuration: .init(directory: directory, maxBytes: 1 << 40, sync: .never),
            source: SyntheticSource(size: 64, delay: .zero)
        )
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in stride(from: worker, to: entries, by: 8) {
                        let response = try await populate.fetch(CacheKey(url: "https://origin.example/seg\(index).ts"))
                        for try await _ in response.body {}
                    }
                }
            }
            try await group.waitForAll()
        }
        await populate.close()

        let source = SyntheticSource(size: 64, delay: .zero)
        var start = DispatchTime.now().uptimeNanoseconds
        var cache = try SegmentCache(configuration: .init(directory: directory, maxBytes: 1 << 40), source: source)
        let snapshotMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        precondition(
            cache.statistics.entries == entries, "expected \(entries) entries, found \(cache.statistics.entries)")
        // Opening consumed the snapshot and no close wrote a new one: the next open scans, as after a crash.
        start = DispatchTime.now().uptimeNanoseconds
        cache = try SegmentCache(configuration: .init(directory: directory, maxBytes: 1 << 40), source: source)
        let scanMilliseconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
        precondition(cache.statistics.entries == entries, "scan found \(cache.statistics.entries) entries")
        await cache.close()
        print("cache_open_100k_ms \(String(format: "%.1f", snapshotMilliseconds))")
        print("cache_open_100k_scan_ms \(String(format: "%.1f", scanMilliseconds))")
    }

    static func hitReadFigure(directory: String) async throws {
        let size = 2 << 20
        let cache = try SegmentCache(
            configuration: .init(directory: directory, maxBytes: 1 << 30),
            source: SyntheticSource(size: size, delay: .zero)
        )
        let key = CacheKey(url: "https://origin.example/big.ts")
        for try await _ in try await cache.fetch(key).body {}
        // The fill publishes after its body ends: wait for it.
        while try await cache.fetch(key).disposition != .hit { try await Task.sleep(for: .milliseconds(10)) }
        let reads = 1_000
        var total = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<reads {
            let response = try await cache.fetch(key)
            precondition(response.disposition == .hit)
            for try await chunk in response.body { total += chunk.count }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        precondition(total == size * reads)
        await cache.close()
        print("cache_hit_read_gbps \(String(format: "%.1f", Double(total) * 8 / seconds / 1e9))")
    }

    static func singleFlightFigure(directory: String) async throws {
        let size = 1 << 20
        let cache = try SegmentCache(
            configuration: .init(directory: directory, maxBytes: 1 << 30),
            source: SyntheticSource(size: size, delay: .milliseconds(50))
        )
        let key = CacheKey(url: "https://origin.example/cold.ts")
        let lengths = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    var length = 0
                    for try await chunk in try await cache.fetch(key).body { length += chunk.count }
                    return length
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        precondition(lengths.count == 100 && lengths.allSatisfy { $0 == size })
        print("singleflight_origin_fetches \(cache.statistics.originFetches)")
        await cache.close()
    }
}
