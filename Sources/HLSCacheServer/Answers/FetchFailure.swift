import HTTPTypes
import Logging
import ManifestURLs
import OriginCache
import OriginClient
import SegmentCache

/// What a failed fetch tells the player and the log: the one place where an error, or an origin's non-2xx answer,
/// becomes an HTTP status with a one-line reason.
///
/// | Failure | Status | Stale copy instead |
/// |---|---|---|
/// | invalid playlist or MPD | 502 | no |
/// | a manifest view that leaves nothing, or asks before the live history | 422 | no |
/// | the parent answered 508 (a loop of `--parent`s) | 508 | no |
/// | the address policy refused the origin | 403 | no |
/// | the request cannot be sent (bad URL) | 400 | no |
/// | larger than `--max-object-size` | 502 | no |
/// | origin timed out | 504 | yes |
/// | any other origin failure (DNS, connect, reset, TLS…) | 502 | yes |
/// | origin answered 4xx | the same 4xx | no |
/// | origin answered 404 or 410 for a segment the live history lists | 410 | no |
/// | origin answered 5xx (or another non-2xx) | 502 | 5xx only |
/// | `--max-fills` origin fetches in flight already | 503 with `Retry-After: 1` | no |
/// | too many renderings of views waiting (``ViewRenderGate``) | 503 with `Retry-After: 1` | no |
/// | anything else (a disk error, a rendering lost) | 502 | no |
struct FetchFailure: Sendable {
    /// The status the player gets.
    let status: HTTPResponse.Status
    /// The one-line reason in the body.
    let reason: String
    /// Why a stale copy is served instead, when one may be: the origin failed, not the request or the cache.
    let staleReason: String?
    /// Seconds the player is told to wait before asking again (`Retry-After`), for a refusal that passes.
    private(set) var retryAfter: Int?
    /// What is logged when the failure is answered (the access log line always is).
    private let logLine: (level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata)?

    /// `499`, nginx's status for a request whose client closed the connection before its answer: what the access
    /// log records for a plan cut short by the player leaving.
    static let clientClosedRequest = HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request")

    /// The failure of fetching `url` with `error`.
    init(_ error: any Error, url: String) {
        if let invalid = error as? InvalidMPDError {
            self.init(
                .badGateway, invalid.description, stale: nil,
                log: (.warning, "invalid MPD", ["url": "\(invalid.url)", "error": "\(invalid.error)"]))
            return
        }
        if let invalid = error as? InvalidPlaylistError {
            self.init(
                .badGateway, invalid.description, stale: nil,
                log: (.warning, "invalid playlist", ["url": "\(invalid.url)", "error": "\(invalid.error)"]))
            return
        }
        if let view = error as? ManifestViewError {
            let status: HTTPResponse.Status =
                view.isMalformedRequest ? .badRequest : view.isUnprocessable ? .unprocessableContent : .badGateway
            self.init(
                status, view.message, stale: nil,
                log: status == .badGateway
                    ? (.warning, "view not renderable", ["url": "\(url)", "error": "\(view.message)"]) : nil)
            return
        }
        if let loop = error as? ParentLoopError {
            self.init(
                RequestResolution.loopDetected, loop.description, stale: nil,
                log: (.error, "parent loop", ["url": "\(loop.url)", "parent": "\(loop.parent)"]))
            return
        }
        if error is CancellationError {
            // The player left while its answer was planned: the fill goes on for the cache; nothing failed.
            self.init(Self.clientClosedRequest, "the player left before its answer", stale: nil, log: nil)
            return
        }
        if let error = error as? ViewRenderQueueFullError {
            self.init(.serviceUnavailable, error.description, stale: nil, log: nil)
            retryAfter = 1
            return
        }
        if let error = error as? CacheError, error.isSameKind(as: .tooManyFillsKind) {
            self.init(.serviceUnavailable, error.description, stale: nil, log: nil)
            retryAfter = 1
            return
        }
        guard let error = error as? OriginError else {
            self.init(
                .badGateway, "fetch failed: \(error)", stale: nil,
                log: (.error, "fetch failed", ["url": "\(url)", "error": "\(error)"]))
            return
        }
        switch error.kind {
        case .refused:
            self.init(.forbidden, "origin refused: \(error.reason)", stale: nil, log: nil)
        case .invalidRequest:
            self.init(.badRequest, error.description, stale: nil, log: nil)
        case .tooLarge:
            self.init(.badGateway, "\(error.description) (--max-object-size)", stale: nil, log: nil)
        default:
            let log: (Logger.Level, Logger.Message, Logger.Metadata) = (
                .warning, "origin failed", ["url": "\(url)", "error": "\(error.description)"]
            )
            if error.kind == .timeout {
                self.init(.gatewayTimeout, "origin timed out: \(error.description)", stale: error.description, log: log)
            } else {
                self.init(.badGateway, "origin failed: \(error.description)", stale: error.description, log: log)
            }
        }
    }

    /// The origin answered `status` (not 2xx) for `url`: a 4xx is relayed, anything else is 502.
    init(originStatus status: Int, url: String) {
        let log: (Logger.Level, Logger.Message, Logger.Metadata) = (
            .warning, "origin status", ["url": "\(url)", "status": "\(status)"]
        )
        let reason = "origin answered \(status) for \(url)"
        if (400..<500).contains(status) {
            self.init(HTTPResponse.Status(code: status), reason, stale: nil, log: log)
        } else {
            self.init(.badGateway, reason, stale: status >= 500 ? "origin answered \(status)" : nil, log: log)
        }
    }

    /// A segment the live history lists, gone from the cache and from the origin (which answered `status`): 410.
    init(goneFromHistory url: String, originStatus status: Int) {
        // The access log line says it; a line more per request would let players flood the log.
        self.init(
            .gone,
            "the live history lists \(url), but the cache no longer has it and the origin answered \(status)",
            stale: nil, log: nil)
    }

    private init(
        _ status: HTTPResponse.Status, _ reason: String, stale: String?,
        log: (level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata)?
    ) {
        self.status = status
        // Query values and userinfo masked, as in logs: with --cache-key-ignore-query the URL an error names may
        // be another viewer's, token included.
        self.reason = SecretRedaction.redact(reason)
        self.staleReason = stale
        self.logLine = log
    }

    /// Logs the failure and answers it.
    func answer(record: AccessRecord, logger: Logger) -> Answer {
        if let logLine { logger.log(level: logLine.level, logLine.message, metadata: logLine.metadata) }
        var answer = Answer(failure: status, reason: reason, record: record)
        if let retryAfter { answer.setField(.retryAfter, to: String(retryAfter)) }
        return answer
    }
}
