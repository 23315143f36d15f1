import Foundation
import Synchronization

/// `hlscache prefetch` run as a user runs it: the built binary, its exit status, standard output and error.
enum PrefetchProcess {
    struct Result: Sendable {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs `hlscache prefetch ARGUMENTS` to its end, off the concurrency pool.
    static func run(_ arguments: [String]) async throws -> Result {
        try await offPool { try runBlocking(arguments, killWhen: nil) }
    }

    /// Runs it and kills it with SIGKILL as soon as `killWhen` returns true (checked every 10 ms).
    static func run(_ arguments: [String], killWhen: @escaping @Sendable () -> Bool) async throws -> Result {
        try await offPool { try runBlocking(arguments, killWhen: killWhen) }
    }

    private static func runBlocking(_ arguments: [String], killWhen: (@Sendable () -> Bool)?) throws -> Result {
        let process = Process()
        process.executableURL = ServerProcess.binary
        process.arguments = ["prefetch"] + arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HLSCACHE_") }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let collected = Mutex((Data(), Data()))
        let readers = [
            Thread {
                let data = output.fileHandleForReading.readDataToEndOfFile(); collected.withLock { $0.0 = data }
            },
            Thread {
                let data = errors.fileHandleForReading.readDataToEndOfFile(); collected.withLock { $0.1 = data }
            },
        ]
        readers.forEach { $0.start() }
        if let killWhen {
            while process.isRunning && !killWhen() { Thread.sleep(forTimeInterval: 0.01) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        while readers.contains(where: \.isExecuting) { Thread.sleep(forTimeInterval: 0.01) }
        let (out, err) = collected.withLock { $0 }
        return Result(
            status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
            errors: String(decoding: err, as: UTF8.self))
    }
}
