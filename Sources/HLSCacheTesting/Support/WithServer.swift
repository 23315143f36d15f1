/// Runs `body` with a started ``StreamOrigin`` and an `hlscache serve` process allowed to reach it
/// (`--allow-host 127.0.0.1`), then stops both, the server with SIGTERM, whether `body` returned or threw.
/// - Parameters:
///   - arguments: more `serve` arguments.
///   - environment: extra environment variables (`HLSCACHE_*`).
///   - openFileLimit: a `ulimit -n` to start the server under, if any.
///   - body: the test, with the server and the origin.
/// - Returns: what `body` returns.
public func withServerProcess<T: Sendable>(
    arguments: [String] = [], environment: [String: String] = [:], openFileLimit: Int? = nil,
    _ body: (ServerProcess, StreamOrigin) async throws -> T
) async throws -> T {
    try await withServerAndOrigin(
        start: { _ in
            try await ServerProcess.start(
                arguments: ["--allow-host", "127.0.0.1"] + arguments, environment: environment,
                openFileLimit: openFileLimit)
        }, body)
}
