/// Why a prefetch could not run at all (as opposed to some objects failing, which the summary lists).
public struct PrefetchError: Error, Sendable, CustomStringConvertible {
    /// Why it failed.
    public enum Reason: Sendable, Hashable {
        /// The entry playlist did not parse: the stream cannot be walked.
        case invalidPlaylist
        /// The entry playlist could not be fetched.
        case entryUnavailable
        /// The destination cannot be used (the output folder cannot be created, say).
        case destination
        /// The stream is of a kind prefetch does not handle yet (a dynamic MPD, an MPD into `--output`).
        case unsupported
    }

    /// Why it failed.
    public let reason: Reason
    /// One line a person can act on, naming the URL or path.
    public let message: String

    /// Creates an error.
    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// A fetch that failed: the origin's status, or the transport's error.
struct FetchFailure: Error, Sendable, CustomStringConvertible {
    /// The HTTP status, when the origin answered.
    let status: Int?
    /// What went wrong, naming the URL.
    let description: String

    /// Whether trying again may help: transport errors, 5xx, 408 and 429.
    var isTransient: Bool {
        guard let status else { return true }
        return status >= 500 || status == 408 || status == 429
    }

    static func status(_ status: Int, url: String) -> FetchFailure {
        FetchFailure(status: status, description: "origin returned \(status) for \(url)")
    }
}
