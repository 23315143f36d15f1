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

extension ServerProcess: RunningServer {
    /// The server's process.
    public var processIdentifier: Int32 { process.processIdentifier }
    /// Whether the process runs.
    public var isRunning: Bool { process.isRunning }
}
