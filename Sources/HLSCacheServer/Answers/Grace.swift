import Foundation
import Logging
import OriginCache
import SegmentCache
import Synchronization

/// Grace: an expired manifest within its grace is answered from the stale copy while one refresh runs through the
/// single flight, so that no player waits on a slow or dead origin for something the cache holds.
///
/// The request that finds no refresh in flight starts one and waits for it at most ``wait``: a healthy origin
/// answers well within it, and the player gets the new version. Every other request while the refresh runs, and
/// that one once the wait is over, gets the stale copy at once (`X-Cache: STALE`, with `Age`); so does every request
/// for a refresh period after one failed (``RefreshBackoff``), so that an origin failing at once is not asked by
/// every player. Within grace: live manifests up to three target durations since they were fetched, others
/// `--playlist-grace` past their expiry.
struct Grace {
    let components: ServerComponents

    /// How long the request that starts a refresh waits for it before answering from the stale copy.
    static let wait: Duration = .milliseconds(500)

    /// The stale answer for `resolved`, or `nil` when the normal path should answer: nothing expired is held, it
    /// is not a manifest, it is past its grace, or the refresh this request started arrived in time.
    func answer(_ resolved: RequestResolution.ProxiedObject, record: AccessRecord) async -> Answer? {
        let key = resolved.key
        let cache = components.cache
        guard let stale = cache.staleEntry(for: key), stale.metadata.objectKind.isManifest,
            let (rendered, age) = PlaylistRenderer(components: components, view: resolved.view).staleRendering(
                key: key, response: stale)
        else { return nil }
        if !rendered.isLive {
            let expiredFor = stale.metadata.expiry.map { -$0.timeIntervalSinceNow } ?? 0
            guard expiredFor <= components.configuration.playlistGrace.seconds else { return nil }
        }
        let backoff = components.refreshBackoff
        if !cache.isFilling(key), backoff.claimRefresh(of: key) {
            let period = RefreshBackoff.period(isLive: rendered.isLive, liveFreshSeconds: rendered.liveFreshSeconds)
            let refresh = Task {
                // Recorded when it ends, waited for or not: a failure holds the next refresh back for a period.
                do {
                    let response = try await cache.fetch(key, freshness: .fresh)
                    if (200..<300).contains(response.metadata.status) {
                        backoff.refreshSucceeded(key)
                    } else {
                        backoff.refreshFailed(key, period: period)
                    }
                    return response
                } catch {
                    backoff.refreshFailed(key, period: period)
                    throw error
                }
            }
            // In time: the normal path finds the new version (or joins its flight). A failure: stale, at once.
            if await Self.outcome(of: refresh, within: Self.wait) == .arrived { return nil }
        }
        components.logger.info(
            "serving stale playlist during refresh", metadata: ["url": "\(key.url)", "age_s": "\(Int(age))"])
        if resolved.asStored {
            return .object(
                stale, requested: resolved.requested, result: .stale, record: record, components: components)
        }
        return .playlist(rendered, metadata: stale.metadata, result: .stale, record: record, components: components)
    }

    /// What became of a refresh within a wait.
    enum Outcome: Sendable { case arrived, failed, pending }

    /// Waits for `refresh` at most `limit`, leaving it running after that.
    static func outcome(of refresh: Task<CacheResponse, any Error>, within limit: Duration) async -> Outcome {
        let gate = Gate()
        return await withCheckedContinuation { continuation in
            gate.continuation.withLock { $0 = continuation }
            Task {
                let outcome: Outcome
                do {
                    let response = try await refresh.value
                    outcome = (200..<300).contains(response.metadata.status) ? .arrived : .failed
                } catch {
                    outcome = .failed
                }
                gate.continuation.withLock { $0.take() }?.resume(returning: outcome)
            }
            Task {
                try? await Task.sleep(for: limit)
                gate.continuation.withLock { $0.take() }?.resume(returning: .pending)
            }
        }
    }

    /// The waiter, resumed once by whichever comes first.
    private final class Gate: Sendable {
        let continuation = Mutex<CheckedContinuation<Outcome, Never>?>(nil)
    }
}
