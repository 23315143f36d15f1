import Foundation

/// A running `hlscache serve`, in its own process (``ServerProcess``) or in the test's: what a test that is not
/// about the process asks of it.
public protocol RunningServer: Sendable {
    /// The port it listens on.
    var port: Int { get }
    /// The process it runs in (the test's own, for a server in the test process).
    var processIdentifier: Int32 { get }
    /// The cache directory.
    var cacheDirectory: String { get }
    /// Whether the server still runs: its process has not exited, or its run has not returned.
    var isRunning: Bool { get }
    /// Everything the server logged so far.
    var log: String { get }
    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> String
    /// The proxied URL of an origin URL, in the forward form.
    func proxied(_ origin: String) -> String
    /// Everything the server logged before now (waits for a mark's access line).
    func settledLog() async throws -> String
    /// The value of one line of `/metrics`, or 0.
    func metric(_ name: String) async throws -> Double
    /// Begins the graceful shutdown and waits for it: the exit status (-1: had to be killed) and how long it took.
    @discardableResult
    func stop() async -> (status: Int32, seconds: TimeInterval)
}

extension RunningServer {
    /// Everything the server logged before now: lines are written in order by a thread of the server's own, so this
    /// asks for a path no one else asks for (forward mode: answered 404) and waits for its access line.
    /// - Throws: when the mark's line does not appear within 10 s.
    public func settledLog() async throws -> String {
        let mark = "/log-mark-" + UUID().uuidString
        _ = try await TestHTTP.get(url(mark))
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let text = log
            if text.contains("path=" + mark) { return text }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ServerProcessError.didNotStart("the log never showed \(mark):\n\(log.suffix(2000))")
    }

    /// The value of one line of `/metrics`, such as `hlscache_playlist_renders_total`, or 0.
    public func metric(_ name: String) async throws -> Double {
        let text = try await TestHTTP.get(url("/metrics")).text
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    /// `http://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The proxied URL of an origin URL, in the forward form.
    public func proxied(_ origin: String) -> String {
        url("/o/" + origin.replacingOccurrences(of: "://", with: "/"))
    }
}

/// Runs `body` with a started ``StreamOrigin`` and a server `start` starts for it, then stops both, the server
/// first, whether `body` returned or threw: what ``withServerProcess(arguments:environment:openFileLimit:_:)`` and the
/// server tests' in-process `withServer` share.
public func withServerAndOrigin<Server: RunningServer, T: Sendable>(
    start: (StreamOrigin) async throws -> Server, _ body: (Server, StreamOrigin) async throws -> T
) async throws -> T {
    try await StreamOrigin.withRunning { origin in
        let server = try await start(origin)
        do {
            let result = try await body(server, origin)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }
}

extension ServerProcess: RunningServer {
    /// The server's process.
    public var processIdentifier: Int32 { process.processIdentifier }
    /// Whether the process runs.
    public var isRunning: Bool { process.isRunning }
}
