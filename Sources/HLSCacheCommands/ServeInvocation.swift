import ArgumentParser
import HLSCacheServer
import Logging

/// `hlscache serve ARGUMENTS` parsed and checked exactly as the command line does (without reading `HLSCACHE_*`
/// variables): the server's configuration, its log level and the warnings it logs at start. The binary runs the
/// server from it; a test runs the same server inside its own process.
public struct ServeInvocation: Sendable {
    /// What the server serves, and how.
    public let configuration: ServerConfiguration
    /// The lowest level logged (`--log-level`).
    public let logLevel: Logger.Level
    /// Lines to log as warnings at start: deprecated spellings of options.
    public let warnings: [String]

    /// Parses `serve`'s arguments (without the word `serve`).
    /// - Throws: ``ServeArgumentsError``, with the message the command line prints.
    public init(arguments: [String]) throws(ServeArgumentsError) {
        do {
            try self.init(command: ServeCommand.parse(arguments))
        } catch {
            throw ServeArgumentsError(message: ServeCommand.message(for: error))
        }
    }

    /// The invocation of a parsed command.
    init(command: ServeCommand) throws {
        configuration = try command.makeConfiguration()
        logLevel = Logger.Level(rawValue: command.logLevel) ?? .info
        warnings = command.deprecations
    }

    /// The server's logger: one line per message through ``LineLogHandler`` in the configured format.
    /// - Parameter lines: where lines go (whole ones, in batches, from a thread of the log's own); standard output
    ///   when `nil`.
    public func logger(lines: (@Sendable ([UInt8]) -> Void)? = nil) -> Logger {
        Logger(label: "hlscache") { label in logHandler(label: label, lines: lines) }
    }

    /// The handler of a logger labelled `label` (the process's logging system gets it for every label).
    /// - Parameters:
    ///   - label: the logger's label (written in JSON lines as `logger`).
    ///   - lines: where lines go; standard output when `nil`.
    public func logHandler(label: String, lines: (@Sendable ([UInt8]) -> Void)? = nil) -> LineLogHandler {
        var handler =
            lines.map { LineLogHandler(label: label, format: configuration.logFormat, lines: $0) }
            ?? LineLogHandler(label: label, format: configuration.logFormat)
        handler.logLevel = logLevel
        return handler
    }
}

/// `serve`'s arguments do not parse or do not pass their checks.
public struct ServeArgumentsError: Error, CustomStringConvertible {
    /// The message the command line prints for them.
    public let message: String

    /// The message.
    public var description: String { message }
}
