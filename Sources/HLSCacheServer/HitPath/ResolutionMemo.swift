import HTTPTypes
import NIOCore
import NIOPosix
import RequestHeads
import SegmentCache
import Synchronization

/// The resolutions the hit path made on this thread (an event loop), by method and target, so that the players
/// asking for the same playlist and segments again and again are resolved once: the origin URL parsed, the
/// address policy's verdict found and the cache key made once, not once per request.
///
/// A resolution depends only on the request and the server's configuration, which never changes: a remembered one
/// is the one the request would get. Only requests without `Range`, `Via` or a read-ahead mark are remembered (the
/// others are rare and vary). The memo belongs to one server's components (a thread serving another starts
/// afresh), and holds at most ``capacity`` targets (the bounded map's choice goes, with its kept hit).
final class ResolutionMemo: @unchecked Sendable {
    // Unchecked: each memo belongs to one thread (it is thread-specific) and is only touched there.

    /// The most targets remembered per thread.
    static let capacity = 1024

    private static let memos = ThreadSpecificVariable<ResolutionMemo>()

    /// The ``ServerComponents/identity`` of the components this memo belongs to. Neither it nor its targets hold a
    /// weak reference: an object weakly referenced counts every retain and release the slow way (a side table), and
    /// the components and the memo are retained and released on every request.
    private let owner: UInt64
    /// Unique among memos: what a target (``RememberedTarget``) names its memo by.
    fileprivate let identity = ResolutionMemo.identities.add(1, ordering: .relaxed).newValue
    private static let identities = Atomic<UInt64>(0)
    private var targets = ClockMap<Key, RememberedTarget>(capacity: ResolutionMemo.capacity)
    /// The targets given a kept hit since the last ``dropKeptHits()``, at most ``keptHitCapacity``.
    private var keeping: [RememberedTarget] = []

    /// The most kept hits per thread (each holds an answer's fields, and a copy of a body of at most
    /// ``KeptHit/copiedBodyLimit`` or what keeps a shared one: a buffer, an entry file's descriptor).
    static let keptHitCapacity = 32

    private struct Key: Hashable {
        var method: HTTPRequest.Method
        var target: String
    }

    private init(owner: ServerComponents) {
        self.owner = owner.identity
    }

    /// This thread's memo, when `identity` names it.
    fileprivate static func current(identity: UInt64) -> ResolutionMemo? {
        guard let memo = memos.currentValue, memo.identity == identity else { return nil }
        return memo
    }

    /// What this thread remembers of `request`'s target, or learns of it now; for a request that is not remembered
    /// (a range, `Via`, a read-ahead), a fresh record that nothing keeps.
    static func remembered(_ request: ExchangeRequest, components: ServerComponents) -> RememberedTarget {
        // Targets past the server's limit are refused (414) and never kept: the decoder may hand on targets of up
        // to the decoder's limit, and a memo of them would hold a thousand of those per thread.
        let memorable =
            request.range == nil && request.via == nil && request.readAhead == nil && request.view == nil
            && request.target.utf8.count <= components.configuration.maxRequestTargetLength
        guard memorable else { return RememberedTarget(resolution: resolve(request, components)) }
        let memo: ResolutionMemo
        if let existing = memos.currentValue, existing.owner == components.identity {
            memo = existing
        } else {
            memo = ResolutionMemo(owner: components)
            memos.currentValue = memo
        }
        let key = Key(method: request.method, target: request.target)
        if let known = memo.targets.value(forKey: key) { return known }
        let remembered = RememberedTarget(resolution: resolve(request, components), memo: memo.identity)
        for forgotten in memo.targets.insert(remembered, forKey: key) { forgotten.keep(nil) }
        return remembered
    }

    /// `target` is given a kept hit: past ``keptHitCapacity``, every kept hit of this thread is dropped first.
    fileprivate func keeping(_ target: RememberedTarget) {
        if keeping.count >= Self.keptHitCapacity { dropKeptHits() }
        keeping.append(target)
        scheduleSweep()
    }

    /// How often the kept hits not answered since the last sweep are dropped.
    static let sweepInterval = TimeAmount.seconds(1)

    /// Whether a sweep is scheduled on this thread's event loop.
    private var sweepScheduled = false

    /// Schedules ``sweep()`` on this thread's event loop (none off an event loop), unless one is scheduled.
    private func scheduleSweep() {
        guard !sweepScheduled, let loop = MultiThreadedEventLoopGroup.currentEventLoop else { return }
        sweepScheduled = true
        loop.scheduleTask(in: Self.sweepInterval) { [self] in sweep() }
    }

    /// Drops the kept hits no request took since the last sweep: a kept hit holds its body (an entry file's
    /// descriptor, so an evicted or purged entry's disk space, or a buffer the memory tier let go), and an idle
    /// target's lease is never checked again. An answered one is checked on its next request, which drops it once
    /// its lease ends. Scheduled again while kept hits remain.
    private func sweep() {
        sweepScheduled = false
        var seen = Set<ObjectIdentifier>()
        keeping.removeAll { target in
            // A target kept again after its hit was dropped at a request is listed twice: once is enough.
            guard seen.insert(ObjectIdentifier(target)).inserted, let hit = target.keptHit else { return true }
            guard hit.answeredSinceSweep else {
                target.keep(nil)
                return true
            }
            hit.answeredSinceSweep = false
            return false
        }
        if !keeping.isEmpty { scheduleSweep() }
    }

    private func dropKeptHits() {
        for target in keeping { target.keep(nil) }
        keeping.removeAll(keepingCapacity: true)
    }

    /// The one place a request is resolved: the connection's front, the CMCD prefetch and the fuzzers come
    /// here, through ``remembered(_:components:)``.
    private static func resolve(_ request: ExchangeRequest, _ components: ServerComponents) -> RequestResolution {
        RequestResolution(
            method: request.method, target: request.target, range: request.range, via: request.via,
            readAhead: request.readAhead, view: request.view, components: components)
    }
}

/// What an event-loop thread remembers of one method and target (``ResolutionMemo``): its resolution and the last
/// fresh hit it answered on a lease (``KeptHit``). Only touched on that thread.
final class RememberedTarget {
    /// The request's resolution.
    let resolution: RequestResolution
    /// The last fresh hit (a playlist's rendering, an object's whole body), while its lease may hold.
    private(set) var keptHit: KeptHit?
    /// The ``ResolutionMemo/identity`` of the memo that keeps this target (this thread's, unless it was replaced
    /// since); `nil` for a target not remembered (which keeps no hit).
    private let memo: UInt64?
    /// The last CMCD `nor` decided after this target on this thread (``CMCDPrefetch``): the players of a stream name
    /// the same next object after the same one, and this answers them with no lock and no hash.
    var lastNextObject: CMCDPrefetch.Decided?

    init(resolution: RequestResolution, memo: UInt64? = nil) {
        self.resolution = resolution
        self.memo = memo
    }

    /// Keeps `hit` (or drops the kept hit, for `nil`); a target no memo of this thread keeps keeps nothing.
    func keep(_ hit: KeptHit?) {
        guard let identity = memo, let memo = ResolutionMemo.current(identity: identity) else {
            keptHit = nil
            return
        }
        if hit != nil, keptHit == nil { memo.keeping(self) }
        keptHit = hit
    }
}
