import Foundation
import Glibc
import Synchronization

/// The `SegmentCacheWorker` executable run as a second process on a cache directory.
final class WorkerProcess: Sendable {
    private let process: Process
    private let output = LineBuffer()

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
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [directory, "\(first)", "\(count)", "\(concurrency)", "\(chunkDelayMicroseconds)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        let output = self.output
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else { return }
            let text = String(decoding: data, as: UTF8.self)
            output.lines.withLock { $0 += text.split(separator: "\n").map(String.init) }
        }
        try process.run()
    }

    deinit {
        // A test that failed before killing or waiting must not leave the worker writing into a removed directory.
        if process.isRunning { kill() }
    }

    /// How many bodies the worker has read whole and checked.
    var completed: Int { output.lines.withLock { $0.filter { $0.hasPrefix("complete ") }.count } }

    /// The keys whose fetch the worker has started.
    var started: [Int] {
        output.lines.withLock { $0.compactMap { $0.hasPrefix("start ") ? Int($0.dropFirst(6)) : nil } }
    }

    /// Lines reporting a wrong or failed body.
    var problems: [String] { output.lines.withLock { $0.filter { $0.hasPrefix("wrong ") || $0.hasPrefix("failed ") } } }

    /// Kills the worker with SIGKILL, mid-whatever, and waits for it.
    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits for the worker to exit and returns its status.
    func wait() async -> Int32 {
        while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        return process.terminationStatus
    }
}

/// The worker binary was not found.
struct WorkerMissing: Error, CustomStringConvertible {
    var description: String {
        "SegmentCacheWorker not found next to the test binary; build it (swift build --product SegmentCacheWorker) or set SEGMENT_CACHE_WORKER"
    }
}

/// The worker's output lines, shared with the pipe's reading handler.
private final class LineBuffer: Sendable {
    let lines = Mutex<[String]>([])
}
