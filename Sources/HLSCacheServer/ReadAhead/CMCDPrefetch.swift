import ByteRanges
import Foundation
import HTTPTypes
import ManifestURLs
import OriginCache
import RequestHeads
import SegmentCache
import Synchronization

/// What a player's CMCD asks the server to do besides answering: the next object it names (`nor`, with `nrr` a byte
/// range) is fetched ahead, through a read-ahead queue of its own (``ServerComponents/cmcdReadAhead``: players' `nor`s
/// never push out the playlists' read-ahead) and the cache's single flight, resolved by the same path mapping as the
/// player's own requests (so only objects a player could ask for, of allowed origins, without a CMCD of their own),
/// from the same origin as the request only, for GET requests only.
enum CMCDPrefetch {
    /// What became of a `nor`.
    enum Result: String, Sendable, CaseIterable {
        /// Its fill was queued.
        case queued
        /// The cache holds it already.
        case cached
        /// The player's buffer (`bl`) is above `--cmcd-prefetch-max-buffer`.
        case skippedBuffer = "skipped_buffer"
        /// Not an object of the request's origin that a player may ask for (another origin, a private address,
        /// another of hlscache's routes), too many at once, or not a URL.
        case refused

        /// Its place in ``allCases``.
        var index: Int {
            switch self {
            case .queued: 0
            case .cached: 1
            case .skippedBuffer: 2
            case .refused: 3
            }
        }
    }

    /// The most objects one request's `nor` may name (CMCD v2 lists them): more is refused whole.
    static let maxObjects = 4

    /// The `nor`s decided in the last ``recentPeriod``, by request target and `nor`, with what was decided: the
    /// players of a stream name the same next object after the same one, and a `nor` queued a moment ago is in flight
    /// or cached (counted `cached` again). Bounded (``ClockMap``).
    final class Recent: Sendable {
        /// By a 64-bit hash of the key: a client's long targets and `nor`s are not held (two keys of one hash share a
        /// decision for a second, no more).
        private let decided = Mutex(ClockMap<UInt64, (result: Result, at: ContinuousClock.Instant)>(capacity: 4096))

        /// What was decided for `key` within the period, if anything.
        func result(for key: String, at now: ContinuousClock.Instant) -> Result? {
            let hash = SessionSketch.hash(key)
            return decided.withLock { decided in
                guard let last = decided.peek(hash), now - last.at < recentPeriod else { return nil }
                return last.result == .queued ? .cached : last.result
            }
        }

        /// Notes what was decided for `key`.
        func note(_ result: Result, for key: String, at now: ContinuousClock.Instant) {
            let hash = SessionSketch.hash(key)
            decided.withLock { _ = $0.insert((result, now), forKey: hash) }
        }
    }

    /// How long a decision is taken again for the same target and `nor`.
    static let recentPeriod: Duration = .seconds(1)

    /// A decision kept by the thread that made it, with the target's resolution (``RememberedTarget``).
    struct Decided {
        /// The `nor` and `nrr` decided about.
        var named: String
        var range: String?
        var result: Result
        var at: ContinuousClock.Instant
    }

    /// Counts the request's CMCD and queues its `nor`, if it has any.
    /// - Parameters:
    ///   - request: the request, whose ``ExchangeRequest/cmcd`` is set.
    ///   - resolution: what it resolved to.
    ///   - components: the server's parts.
    static func take(_ request: ExchangeRequest, remembered: RememberedTarget, components: ServerComponents) {
        let resolution = remembered.resolution
        guard let report = request.cmcd else { return }
        let metrics = components.metrics.cmcd
        metrics.count(report)
        // A GET's only: a HEAD costs its client nothing to send.
        guard components.configuration.cmcdPrefetch, request.method == .get, case .success(let cmcd) = report.data,
            let nor = cmcd.value("nor"), case .origin = resolution
        else { return }
        // The buffer is the player's own: decided before what another player's request decided.
        if let buffer = cmcd.integer("bl"), buffer > components.configuration.cmcdPrefetchMaxBuffer.milliseconds {
            metrics.prefetch(.skippedBuffer)
            return
        }
        let now = ContinuousClock.now
        let named: String
        if case .string(let reference) = nor { named = reference } else { named = String(describing: nor) }
        let range = cmcd.string("nrr")
        // This thread decided it a moment ago, after this target: no lock, no hash.
        if let last = remembered.lastNextObject, now - last.at < recentPeriod, last.named == named, last.range == range
        {
            metrics.prefetch(last.result == .queued ? .cached : last.result)
            return
        }
        let key = request.target + " " + named + " " + (range ?? "")
        if let recent = components.cmcdRecent.result(for: key, at: now) {
            remembered.lastNextObject = Decided(named: named, range: range, result: recent, at: now)
            metrics.prefetch(recent)
            return
        }
        guard let result = prefetch(cmcd, after: request.target, resolution: resolution, components: components) else {
            return
        }
        components.cmcdRecent.note(result, for: key, at: now)
        remembered.lastNextObject = Decided(named: named, range: range, result: result, at: now)
        metrics.prefetch(result)
    }

    /// Queues the objects `cmcd` names next, if any.
    /// - Returns: what became of them; `nil` when it names none (or the request is not for an origin object).
    static func prefetch(
        _ cmcd: CMCD, after target: String, resolution: RequestResolution, components: ServerComponents
    ) -> Result? {
        let references: [String]
        switch cmcd.value("nor") {
        case .string(let reference): references = [reference]
        case .list(let items):
            references = items.compactMap { if case .string(let reference) = $0 { reference } else { nil } }
        default: return nil
        }
        guard !references.isEmpty, case .origin(let current) = resolution, !current.isReadAhead else { return nil }
        guard references.count <= maxObjects else { return .refused }
        let range = cmcd.string("nrr").map { "bytes=" + $0 }
        let origin = Self.origin(of: current.url)
        var keys: [CacheKey] = []
        for reference in references {
            guard let next = object(reference, after: target, range: references.count == 1 ? range : nil, components),
                Self.origin(of: next.object.url) == origin
            else { return .refused }
            if !next.held, !components.origin.cache.holds(next.object.key) { keys.append(next.object.key) }
        }
        guard !keys.isEmpty else { return .cached }
        components.cmcdReadAhead.enqueue(keys)
        return .queued
    }

    /// The object `reference` names, resolved against the request's own URL (`nor` is relative to it) and then as a
    /// player's request for it would be.
    private static func object(
        _ reference: String, after target: String, range: String?, _ components: ServerComponents
    ) -> (object: RequestResolution.ProxiedObject, held: Bool)? {
        // Any host serves as the base: only a reference to this server (a path) is taken.
        let base = "http://hlscache.invalid"
        guard let resolved = URLResolution.resolve(reference, against: base + target), resolved.hasPrefix(base + "/")
        else { return nil }
        // As a player's request for it: resolved once per thread and remembered, as the player's will be.
        // Without a CMCD of its own, as a player's request for it would come.
        let request = ExchangeRequest(
            method: .get, target: CMCDQuery.split(String(resolved.dropFirst(base.count))).target, origin: nil,
            range: range, via: nil, accessControlRequestHeaders: nil, readAhead: nil, closes: false)
        let remembered = Answer.remembered(request, components: components)
        guard case .origin(let object) = remembered.resolution else { return nil }
        // This thread answered it from the cache a moment ago (its kept hit): held, with no digest of the key to
        // compute.
        return (object, remembered.keptHit != nil)
    }

    /// `scheme://authority` of an origin URL (as the resolution writes them: one form per origin).
    private static func origin(of url: String) -> Substring {
        let utf8 = url.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return Substring(url) }
        let authority = utf8.index(colon, offsetBy: 3, limitedBy: utf8.endIndex) ?? utf8.endIndex
        let end =
            utf8[authority...].firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            } ?? utf8.endIndex
        return url[..<end]
    }
}

extension Duration {
    /// Whole milliseconds.
    fileprivate var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
