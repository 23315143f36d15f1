import Foundation
import Glibc
import Synchronization

/// The built `hlscache` binary running `serve` on 127.0.0.1 and a free port, as a user would run it.
final class ServerProcess: Sendable {
    let process: Process
    /// The port it listens on.
    let port: Int
    /// The cache directory.
    let cacheDirectory: String
    private let output: LogBuffer

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The proxied URL of an origin URL, in the forward form.
    func proxied(_ origin: String) -> String {
        let rest = origin.replacingOccurrences(of: "://", with: "/")
        return url("/o/" + rest)
    }

    /// Everything the server logged so far.
    var log: String { output.text.withLock { $0 } }

    /// The `hlscache` binary built beside the test bundle.
    static var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("hlscache")
    }

    /// Starts `hlscache serve` and waits until it listens.
    /// - Parameters:
    ///   - cacheDirectory: the cache directory (a new temporary one when `nil`).
    ///   - arguments: more `serve` arguments.
    ///   - environment: extra environment variables (`HLSCACHE_*`).
    ///   - openFileLimit: a soft and hard `RLIMIT_NOFILE` to start it under (`ulimit -n`), if any.
    init(
        cacheDirectory: String? = nil, arguments: [String] = [], environment: [String: String] = [:],
        openFileLimit: Int? = nil
    ) throws {
        let directory = cacheDirectory ?? Self.temporaryDirectory()
        self.cacheDirectory = directory
        let process = Process()
        let serve = ["serve", "--host", "127.0.0.1", "--port", "0", "--cache-dir", directory] + arguments
        if let openFileLimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit -n \(openFileLimit) && exec \"$0\" \"$@\"", Self.binary.path] + serve
        } else {
            process.executableURL = Self.binary
            process.arguments = serve
        }
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HLSCACHE_") }
        env.merge(environment) { $1 }
        process.environment = env
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        let output = LogBuffer()
        // A reader thread of our own: FileHandle.availableData traps on EINTR, which SIGCHLD from the many child
        // processes of the test run can cause.
        let descriptor = pipe.fileHandleForReading.fileDescriptor
        Thread {
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return }
                output.text.withLock { $0 += String(decoding: chunk[..<count], as: UTF8.self) }
            }
        }.start()
        try process.run()
        self.process = process
        self.output = output
        let deadline = Date().addingTimeInterval(20)
        var found: Int?
        while found == nil, Date() < deadline, process.isRunning {
            let text = output.text.withLock { $0 }
            if let range = text.range(of: "address=http://127.0.0.1:") {
                found = Int(text[range.upperBound...].prefix { $0.isNumber })
            } else {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        guard let found else {
            process.terminate()
            throw ServerProcessError.didNotStart(output.text.withLock { $0 })
        }
        self.port = found
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Starts `hlscache serve` off the concurrency pool and waits until it listens.
    static func start(
        cacheDirectory: String? = nil, arguments: [String] = [], environment: [String: String] = [:],
        openFileLimit: Int? = nil
    ) async throws -> ServerProcess {
        try await offPool {
            try ServerProcess(
                cacheDirectory: cacheDirectory, arguments: arguments, environment: environment,
                openFileLimit: openFileLimit)
        }
    }

    /// The most memory the server has held (`VmHWM`), in bytes.
    var peakMemory: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// CPU time the server has used, in clock ticks (user and system, `/proc/<pid>/stat`).
    var cpuTicks: Int {
        let stat = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8)) ?? ""
        // Fields after the command name (which ends with ")"): utime and stime are the 12th and 13th of them.
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return 0 }
        return user + system
    }

    /// The value of one line of `/metrics`, such as `hlscache_playlist_renders_total`, or 0.
    func metric(_ name: String) async throws -> Double {
        let text = try await TestHTTP.get(url("/metrics")).text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// Sends SIGTERM and waits for the exit, off the concurrency pool.
    @discardableResult
    func stop() async -> (status: Int32, seconds: TimeInterval) {
        (try? await offPool { self.terminate() }) ?? (-1, 0)
    }

    /// Sends SIGTERM and waits for the exit.
    /// - Returns: the exit status and how long the exit took.
    @discardableResult
    func terminate(timeout: TimeInterval = 20) -> (status: Int32, seconds: TimeInterval) {
        let start = Date()
        process.terminate()
        return (waitForExit(timeout: timeout), Date().timeIntervalSince(start))
    }

    /// Kills the process with SIGKILL and waits for it to go.
    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        _ = waitForExit(timeout: 10)
    }

    private func waitForExit(timeout: TimeInterval) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return -1
        }
        return process.terminationStatus
    }

    /// A new empty temporary directory.
    static func temporaryDirectory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hlscache-test-\(UUID().uuidString)")
            .path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// The server did not start.
enum ServerProcessError: Error, CustomStringConvertible {
    case didNotStart(String)

    var description: String {
        switch self {
        case .didNotStart(let output): "hlscache serve did not start:\n\(output)"
        }
    }
}

/// The server's output, shared with the pipe's reader.
final class LogBuffer: Sendable {
    let text = Mutex("")
}
