import Glibc

/// A failed system call on the cache directory: which call, on which path, and `errno`.
package struct SystemError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `errno` value the call failed with.
    package let code: CInt
    /// The call: `open`, `write`, `fsync`, `rename`, …
    package let operation: String
    /// The path concerned, when there is one.
    package let path: String?

    /// Creates an error.
    /// - Parameters:
    ///   - code: the `errno` value.
    ///   - operation: the system call that failed.
    ///   - path: the path concerned.
    package init(code: CInt, operation: String, path: String?) {
        self.code = code
        self.operation = operation
        self.path = path
    }

    /// The error of the call that just failed, from `errno`.
    static func current(_ operation: String, path: String?) -> SystemError {
        SystemError(code: errno, operation: operation, path: path)
    }

    /// `write /cache/tmp/x.part: No space left on device (errno 28)`.
    package var description: String {
        let reason = String(cString: strerror(code))
        guard let path else { return "\(operation): \(reason) (errno \(code))" }
        return "\(operation) \(path): \(reason) (errno \(code))"
    }
}
