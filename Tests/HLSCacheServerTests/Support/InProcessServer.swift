import Foundation
import HLSCacheCommands
import HLSCacheServer
import HLSCacheTesting
import Logging
import Synchronization

/// `hlscache serve` running inside the test process on 127.0.0.1 and a free port: the same command-line parsing
/// (``ServeInvocation``), the same ``HLSCacheServer``, its log kept in memory instead of written to standard output.
/// What every server test uses unless it is about the process itself (signals, exit codes, environment variables,
/// its memory, threads or descriptors, kill -9): those use ``ServerProcess``.
///
/// The server does not bind its threads to processors (`--cpu-affinity off`): they are the test process's threads.
final class InProcessServer: RunningServer {
    /// The port it listens on.
    let port: Int
    /// The HTTPS port, when it serves HTTPS (`--tls-certificate`).
    let tlsPort: Int?
    /// The cache directory.
    let cacheDirectory: String
    private let lines: LogLines
    private let stopper: ServerStop
    private let running: Task<Void, any Error>

    private init(
        port: Int, tlsPort: Int?, cacheDirectory: String, lines: LogLines, stopper: ServerStop,
        running: Task<Void, any Error>
    ) {
        self.port = port
        self.tlsPort = tlsPort
        self.cacheDirectory = cacheDirectory
        self.lines = lines
        self.stopper = stopper
        self.running = running
    }

    /// Whether the server's run has not returned (a trap in it would have ended the test process).
    var isRunning: Bool { !lines.finished.load(ordering: .acquiring) }

    /// The test process's.
    var processIdentifier: Int32 { getpid() }

    /// Everything the server logged so far (the lines its log's thread has handed over).
    var log: String { lines.text }

    /// Starts the server and waits until it listens.
    /// - Parameters:
    ///   - cacheDirectory: the cache directory (a new temporary one when `nil`).
    ///   - arguments: more `serve` arguments.
    ///   - port: the port to listen on; any free one when `nil`.
    /// - Throws: ``ServerProcessError/didNotStart(_:)`` when the arguments do not parse or the server does not start.
    static func start(
        cacheDirectory: String? = nil, arguments: [String] = [], port: Int? = nil
    ) async throws
        -> InProcessServer
    {
        let directory = cacheDirectory ?? ServerProcess.temporaryDirectory()
        let invocation: ServeInvocation
        do {
            invocation = try ServeInvocation(
                arguments: [
                    "--host", "127.0.0.1", "--port", String(port ?? 0), "--cache-dir", directory, "--cpu-affinity",
                    "off",
                ] + arguments)
        } catch {
            throw ServerProcessError.didNotStart(error.message)
        }
        let lines = LogLines()
        let logger = invocation.logger { batch in lines.append(batch) }
        for line in invocation.warnings { logger.warning("deprecated option", metadata: ["reason": "\(line)"]) }
        let server = try HLSCacheServer(configuration: invocation.configuration, logger: logger)
        let stopper = ServerStop()
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let running = Task {
            defer {
                lines.finished.store(true, ordering: .releasing)
                continuation.finish()
            }
            try await server.run(signals: [], stop: stopper) { port in continuation.yield(port) }
        }
        guard let bound = await ports.first(where: { _ in true }) else {
            var reason = "stopped before listening"
            if case .failure(let error) = await running.result { reason = "Error: \(error)" }
            throw ServerProcessError.didNotStart("\(lines.text)\(reason)")
        }
        return InProcessServer(
            port: bound, tlsPort: server.tlsPort, cacheDirectory: directory, lines: lines, stopper: stopper,
            running: running)
    }

    /// `https://127.0.0.1:<tlsPort><path>`.
    func secureURL(_ path: String) -> String { "https://127.0.0.1:\(tlsPort ?? 0)\(path)" }

    /// Begins the graceful shutdown, as SIGTERM does, and waits for the server to finish it.
    /// - Returns: 0 when the server stopped cleanly (1 when its run threw), and how long the stop took.
    @discardableResult
    func stop() async -> (status: Int32, seconds: TimeInterval) {
        let start = Date()
        await stopper.request()
        let status: Int32
        switch await running.result {
        case .success: status = 0
        case .failure: status = 1
        }
        return (status, Date().timeIntervalSince(start))
    }
}

/// The lines an in-process server logged, and whether its run has returned.
private final class LogLines: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    /// Set when the server's run returns.
    let finished = Atomic<Bool>(false)

    /// Everything so far, as text.
    var text: String { bytes.withLock { String(decoding: $0, as: UTF8.self) } }

    /// Adds a batch of whole lines.
    func append(_ batch: [UInt8]) {
        bytes.withLock { $0.append(contentsOf: batch) }
    }
}

/// Runs `body` with a started ``StreamOrigin`` and an in-process server allowed to reach it
/// (`--allow-host 127.0.0.1`), then stops both, whether `body` returned or threw.
/// - Parameters:
///   - arguments: more `serve` arguments.
///   - body: the test, with the server and the origin.
/// - Returns: what `body` returns.
func withServer<T: Sendable>(
    arguments: [String] = [], _ body: (InProcessServer, StreamOrigin) async throws -> T
) async throws -> T {
    try await withServerAndOrigin(
        start: { _ in try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1"] + arguments) }, body)
}

/// A server in its own process with HTTPS on a port the test picked: TLS work (encryption, file bodies read on the
/// event loop) stays off the test process's shared event loops, where it held up the other suites' in-process servers.
final class TLSServerProcess: RunningServer {
    /// The process.
    let server: ServerProcess
    /// Its HTTPS port.
    let tlsPort: Int?

    /// Starts it with `arguments`, HTTPS on a free port.
    static func start(arguments: [String]) async throws -> TLSServerProcess {
        let tlsPort = try freeLoopbackPort()
        let server = try await ServerProcess.start(arguments: arguments + ["--tls-port", String(tlsPort)])
        return TLSServerProcess(server: server, tlsPort: tlsPort)
    }

    private init(server: ServerProcess, tlsPort: Int) {
        self.server = server
        self.tlsPort = tlsPort
    }

    var port: Int { server.port }
    var processIdentifier: Int32 { server.processIdentifier }
    var cacheDirectory: String { server.cacheDirectory }
    var isRunning: Bool { server.isRunning }
    var log: String { server.log }

    @discardableResult
    func stop() async -> (status: Int32, seconds: TimeInterval) { await server.stop() }

    /// `https://127.0.0.1:<tlsPort><path>`.
    func secureURL(_ path: String) -> String { "https://127.0.0.1:\(tlsPort ?? 0)\(path)" }
}
