import Foundation
import Glibc

/// The built `hlscache` binary running `serve` on 127.0.0.1 and a free port, as a user would run it.
public final class ServerProcess: Sendable {
    /// The running program.
    public let child: ChildProcess
    /// The port it listens on.
    public let port: Int
    /// The cache directory.
    public let cacheDirectory: String

    /// The process.
    public var process: SpawnedProcess { child.process }

    /// Everything the server logged so far (standard output and error).
    public var log: String { child.output }

    /// The `hlscache` binary built beside the test bundle.
    public static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("hlscache")
    }

    /// Starts `hlscache serve` and waits (blocking) until it listens.
    /// - Parameters:
    ///   - cacheDirectory: the cache directory (a new temporary one when `nil`).
    ///   - arguments: more `serve` arguments.
    ///   - environment: extra environment variables (`HLSCACHE_*`).
    ///   - openFileLimit: a soft and hard `RLIMIT_NOFILE` to start it under (`ulimit -n`), if any.
    ///   - port: the port to listen on (``freeLoopbackPort()``, for a server others must be told of before it
    ///     starts); any free one when `nil`.
    public init(
        cacheDirectory: String? = nil, arguments: [String] = [], environment: [String: String] = [:],
        openFileLimit: Int? = nil, port: Int? = nil
    ) throws {
        let directory = cacheDirectory ?? Self.temporaryDirectory()
        self.cacheDirectory = directory
        let serve = ["serve", "--host", "127.0.0.1", "--port", String(port ?? 0), "--cache-dir", directory] + arguments
        var env = ChildProcess.cleanEnvironment
        env.merge(environment) { $1 }
        if let openFileLimit {
            child = try ChildProcess(
                "/bin/sh", ["-c", "ulimit -n \(openFileLimit) && exec \"$0\" \"$@\"", Self.binary.path] + serve,
                environment: env, mergeErrors: true)
        } else {
            child = try ChildProcess(Self.binary.path, serve, environment: env, mergeErrors: true)
        }
        let deadline = Date().addingTimeInterval(20)
        var found: Int?
        while found == nil, Date() < deadline, child.isRunning {
            let text = child.output
            if let range = text.range(of: "address=http://127.0.0.1:") {
                found = Int(text[range.upperBound...].prefix { $0.isNumber })
            } else {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        guard let found else {
            child.send(SIGKILL)
            throw ServerProcessError.didNotStart(child.output)
        }
        self.port = found
    }

    /// Starts `hlscache serve` off the concurrency pool and waits until it listens.
    public static func start(
        cacheDirectory: String? = nil, arguments: [String] = [], environment: [String: String] = [:],
        openFileLimit: Int? = nil, port: Int? = nil
    ) async throws -> ServerProcess {
        try await offPool {
            try ServerProcess(
                cacheDirectory: cacheDirectory, arguments: arguments, environment: environment,
                openFileLimit: openFileLimit, port: port)
        }
    }

    /// The most memory the server has held (`VmHWM`), in bytes.
    public var peakMemory: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// The names of the server's threads (`/proc/<pid>/task/*/comm`).
    public var threadNames: [String] {
        let tasks = "/proc/\(process.processIdentifier)/task"
        let ids = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
        return ids.compactMap { id in
            (try? String(contentsOfFile: "\(tasks)/\(id)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
        }
    }

    /// The server's threads with the processors each may run on.
    public var threadProcessors: [(name: String, processors: [Int])] {
        HLSCacheTesting.threadProcessors(ofProcess: process.processIdentifier)
    }

    /// CPU time the server has used, in clock ticks (user and system, `/proc/<pid>/stat`).
    public var cpuTicks: Int {
        let stat = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)) ?? ""
        // Fields after the command name (which ends with ")"): utime and stime are the 12th and 13th of them.
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        return user + system
    }

    /// Sends SIGTERM and waits for the exit, off the concurrency pool.
    @discardableResult
    public func stop() async -> (status: Int32, seconds: TimeInterval) {
        (try? await offPool { self.terminate() }) ?? (-1, 0)
    }

    /// Sends SIGTERM and waits (blocking) for the exit.
    /// - Returns: the exit status (-1 when it had to be killed) and how long the exit took.
    @discardableResult
    public func terminate(timeout: TimeInterval = 20) -> (status: Int32, seconds: TimeInterval) {
        let start = Date()
        child.send(SIGTERM)
        let result = child.waitForExit(timeout: timeout)
        return (result.status, Date().timeIntervalSince(start))
    }

    /// Kills the process with SIGKILL and waits (blocking) for it to go.
    public func kill9() {
        child.send(SIGKILL)
        child.waitForExit(timeout: 10)
    }

    /// A new empty temporary directory, removed with everything in it when the test process exits.
    public static func temporaryDirectory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hlscache-test-\(UUID().uuidString)")
            .path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        TemporaryDirectories.register(path)
        return path
    }
}

/// The server did not start.
public enum ServerProcessError: Error, CustomStringConvertible {
    /// It exited or did not report its address within 20 s; its output.
    case didNotStart(String)

    /// What went wrong, with the output.
    public var description: String {
        switch self {
        case .didNotStart(let output): "hlscache serve did not start:\n\(output)"
        }
    }
}
