import Foundation
import Glibc
import Synchronization

/// The one way the tests run a program: started with `posix_spawn` (``SpawnedProcess``), its standard output and
/// error read by threads of their own with `read(2)` (retried on `EINTR`: Foundation's `FileHandle` reads trap on
/// it, and SIGCHLD from the many children of a test run causes it), waiting never on the concurrency pool, whose
/// threads the in-process origins need.
public final class ChildProcess: Sendable {
    /// What a finished program left.
    public struct Result: Sendable {
        /// The exit status (or the signal number, when killed).
        public var status: Int32
        /// Its standard output.
        public var output: String
        /// Its standard error (empty when merged into the output).
        public var errors: String
    }

    /// The running process.
    public let process: SpawnedProcess
    private let outputBytes = LockedBytes()
    private let errorBytes = LockedBytes()
    /// Reader threads still reading.
    private let openReaders = ReaderCount()

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - executable: the program's path.
    ///   - arguments: its arguments.
    ///   - environment: the environment (this process's, without `HLSCACHE_*` variables, when `nil`).
    ///   - mergeErrors: read standard error into the output, in order.
    ///   - input: what to write to its standard input before closing it (none: standard input is empty).
    /// - Throws: ``SpawnedProcess/LaunchError``.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, mergeErrors: Bool = false,
        input: String? = nil
    ) throws {
        let process = try SpawnedProcess(
            executable, arguments, environment: environment ?? Self.cleanEnvironment, mergeErrors: mergeErrors)
        self.process = process
        startReader(process.output, into: outputBytes)
        if let errors = process.errors { startReader(errors, into: errorBytes) }
        if let input {
            _ = Self.brokenPipesIgnored
            Self.writeAll(Array(input.utf8), to: process.input)
        }
        close(process.input)
    }

    /// `SIGPIPE` ignored in the test process, once: a program that exits before it reads its standard input (one that
    /// refuses its arguments) makes the write of that input fail with `EPIPE` instead of ending the whole test run
    /// (it did, once, with signal 13). Children start with every signal at its default (``SpawnedProcess``).
    private static let brokenPipesIgnored: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()

    /// Writes `bytes` to `descriptor`, retrying on `EINTR`; stops early when the reader went away.
    private static func writeAll(_ bytes: [UInt8], to descriptor: CInt) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.write(descriptor, $0.baseAddress! + written, bytes.count - written)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            written += count
        }
    }

    deinit {
        // A test that failed before stopping it must not leave it running, nor a zombie behind. SIGTERM first, so
        // that a program with children of its own ends them (nginx's workers outlive a master killed outright); then,
        // after a grace, SIGKILL.
        guard process.isRunning else { return }
        let process = process
        kill(process.processIdentifier, SIGTERM)
        Thread {
            let deadline = Date().addingTimeInterval(Self.stopGrace)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }.start()
    }

    /// How long a program dropped while running has to end after SIGTERM before it is killed.
    public static let stopGrace: TimeInterval = 2

    /// This process's environment without `HLSCACHE_*` variables, so the developer's own settings do not leak in.
    public static var cleanEnvironment: [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HLSCACHE_") }
    }

    /// What it has written to standard output so far.
    public var output: String { outputBytes.text }

    /// What it has written to standard error so far.
    public var errors: String { errorBytes.text }

    /// Whether it is still running.
    public var isRunning: Bool { process.isRunning }

    /// Sends `signal`.
    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Waits (blocking: call it off the pool) for the exit and the end of its output, killing it after `timeout`.
    /// - Returns: what it left; status -1 when it had to be killed.
    @discardableResult
    public func waitForExit(timeout: TimeInterval = 600) -> Result {
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32?
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            status = -1
        }
        process.waitUntilExit()
        while openReaders.count.load(ordering: .acquiring) > 0 { Thread.sleep(forTimeInterval: 0.005) }
        return Result(status: status ?? process.terminationStatus, output: output, errors: errors)
    }

    /// Runs a program to its end, off the concurrency pool.
    /// - Parameters: see ``init(_:_:environment:mergeErrors:input:)``; `killWhen` is checked every 10 ms, and
    ///   kills the program with SIGKILL once it returns `true`.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, input: String? = nil,
        timeout: TimeInterval = 600, killWhen: (@Sendable () -> Bool)? = nil
    ) async throws -> Result {
        try await offPool {
            let child = try ChildProcess(executable, arguments, environment: environment, input: input)
            if let killWhen {
                while child.isRunning && !killWhen() { Thread.sleep(forTimeInterval: 0.01) }
                if child.isRunning { child.send(SIGKILL) }
            }
            return child.waitForExit(timeout: timeout)
        }
    }

    /// Reads `descriptor` into `bytes` on a thread of its own until the end of file. The thread holds the bytes and
    /// the count, not this object: a test that never stops its child drops it, and ``deinit`` kills the child (a
    /// reader holding the object would keep it, and so the child, alive for the rest of the run).
    private func startReader(_ descriptor: CInt, into bytes: LockedBytes) {
        let openReaders = openReaders
        openReaders.count.add(1, ordering: .relaxed)
        Thread {
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                bytes.append(Array(chunk[..<count]))
            }
            close(descriptor)
            openReaders.count.subtract(1, ordering: .releasing)
        }.start()
    }
}

/// Runs blocking work (waiting for a process, a raw socket) on a thread of its own, never on the concurrency pool,
/// whose threads the in-process origins need.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// How many reader threads of a ``ChildProcess`` are still reading.
private final class ReaderCount: Sendable {
    let count = Atomic<Int>(0)
}

/// Bytes appended by a reader thread and read by the test.
private final class LockedBytes: Sendable {
    private let bytes = Mutex<[UInt8]>([])

    func append(_ chunk: [UInt8]) {
        bytes.withLock { $0.append(contentsOf: chunk) }
    }

    var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }
}
