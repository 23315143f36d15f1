import Foundation
import OriginClient

/// `hlscache-bench origin URL COUNT CONCURRENCY [THREADS]`: fetches URL COUNT times through ``OriginClient`` (with
/// THREADS worker threads, by default the client's default), at most CONCURRENCY at once, checks every length, and
/// prints throughput and peak RSS.
enum OriginBenchmark {
    static func run(url: String, count: Int, concurrency: Int, threads: Int) async throws {
        var configuration = OriginClientConfiguration(policy: AddressPolicy(allowedHosts: ["127.0.0.1"]))
        configuration.workerThreads = threads
        let client = try OriginClient(configuration: configuration)
        defer { client.shutdown() }
        let start = ContinuousClock.now
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            var started = 0
            var bytes = 0
            func fetchOne() async throws -> Int {
                let response = try await client.fetch(OriginRequest(url: url))
                var received = 0
                for try await chunk in response.body { received += chunk.count }
                guard response.status == 200, Int64(received) == response.contentLength else {
                    throw BenchmarkError("bad fetch: status \(response.status), \(received) bytes")
                }
                return received
            }
            while started < min(concurrency, count) {
                group.addTask { try await fetchOne() }
                started += 1
            }
            while let received = try await group.next() {
                bytes += received
                if started < count {
                    group.addTask { try await fetchOne() }
                    started += 1
                }
            }
            return bytes
        }
        let seconds = (ContinuousClock.now - start).seconds
        print("origin_fetch_seconds \(String(format: "%.3f", seconds))")
        print("origin_fetch_gbps \(String(format: "%.2f", Double(total) * 8 / seconds / 1e9))")
        print("origin_fetch_peak_rss_mb \(String(format: "%.1f", PeakRSS.megabytes()))")
    }
}

/// A benchmark failed: the figure would be wrong.
struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The process's peak resident set size, from `/proc/self/status` (VmHWM).
enum PeakRSS {
    static func megabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
