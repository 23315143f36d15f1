import OriginClient
import SegmentCache

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
        /// The view (`--view`) leaves nothing to fetch.
        case view
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

/// A fetch that failed: the origin's status, or the transport's error, and whether trying again may help.
struct FailedFetch: Error, Sendable, CustomStringConvertible {
    /// The HTTP status, when the origin answered.
    let status: Int?
    /// What went wrong, naming the URL.
    let description: String
    /// Whether the failure is one that asking again cannot mend (the address policy refused the host, the object
    /// is larger than allowed, the request cannot be made), whatever its status.
    var isPermanent = false

    /// Whether trying again may help: transport errors, 5xx, 408 and 429, never a permanent failure.
    var isTransient: Bool {
        guard !isPermanent else { return false }
        guard let status else { return true }
        return status >= 500 || status == 408 || status == 429
    }

    /// A failure with a status (or none) and a description.
    init(status: Int?, description: String, isPermanent: Bool = false) {
        self.status = status
        self.description = description
        self.isPermanent = isPermanent
    }

    /// What any error of a fetch is, keeping the origin's and the cache's kinds: the one place a store turns an
    /// error into a failure.
    init(_ error: any Error) {
        switch error {
        case let failure as FailedFetch:
            self = failure
        case let origin as OriginError:
            self.init(
                status: origin.kind == .httpStatus ? origin.status : nil, description: origin.description,
                isPermanent: Self.permanentOriginKinds.contains(origin.kind))
        case let cache as CacheError:
            self.init(
                status: nil, description: cache.description, isPermanent: cache.isSameKind(as: .rangeOutOfBoundsKind))
        case is CancellationError:
            self.init(status: nil, description: "cancelled", isPermanent: true)
        default:
            self.init(status: nil, description: "\(error)")
        }
    }

    /// The origin client's kinds of failure that asking again cannot mend.
    static let permanentOriginKinds: [OriginError.Kind] = [
        .refused, .invalidRequest, .invalidConfiguration, .tooLarge, .tooManyRedirects, .shutDown,
    ]

    static func status(_ status: Int, url: String) -> FailedFetch {
        FailedFetch(status: status, description: "origin returned \(status) for \(url)")
    }
}
