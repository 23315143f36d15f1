import Foundation
import Glibc
import HLSCacheTesting

/// The `SegmentCacheWorker` executable run as a second process on a cache directory.
final class WorkerProcess: Sendable {
    private let child: ChildProcess

    /// Where the worker binary is: `SEGMENT_CACHE_WORKER`, else next to the test binary (SwiftPM's build directory).
    static var executable: String? {
        if let path = ProcessInfo.processInfo.environment["SEGMENT_CACHE_WORKER"] { return path }
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        return candidates.map { $0.appendingPathComponent("SegmentCacheWorker").path }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts the worker.
    /// - Parameters: see `SegmentCacheWorker`'s usage.
    init(directory: String, first: Int, count: Int, concurrency: Int, chunkDelayMicroseconds: Int) throws {
        guard let executable = Self.executable else {
            throw WorkerMissing()
        }
        child = try ChildProcess(
            executable, [directory, "\(first)", "\(count)", "\(concurrency)", "\(chunkDelayMicroseconds)"])
    }

    private var lines: [Substring] { child.output.split(separator: "\n") }

    /// How many bodies the worker has read whole and checked.
    var completed: Int { lines.filter { $0.hasPrefix("complete ") }.count }

    /// The keys whose fetch the worker has started.
    var started: [Int] { lines.compactMap { $0.hasPrefix("start ") ? Int($0.dropFirst(6)) : nil } }

    /// Lines reporting a wrong or failed body.
    var problems: [String] { lines.filter { $0.hasPrefix("wrong ") || $0.hasPrefix("failed ") }.map(String.init) }

    /// Kills the worker with SIGKILL, mid-whatever, and waits for it.
    func kill() {
        guard child.isRunning else { return }
        child.send(SIGKILL)
        child.process.waitUntilExit()
    }

    /// Waits for the worker to exit and returns its status.
    func wait() async -> Int32 {
        while child.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        return child.process.terminationStatus
    }
}

/// The worker binary was not found.
struct WorkerMissing: Error, CustomStringConvertible {
    var description: String {
        "SegmentCacheWorker not found next to the test binary; build it (swift build --product SegmentCacheWorker) or set SEGMENT_CACHE_WORKER"
    }
}
