import HTTPTypes
import Logging
import OriginCache
import SegmentCache

extension Answer {
    /// The answer for a request of an origin object that is not a fresh hit (a miss, a fill in flight, a stale or
    /// expired entry): fetched through the cache and planned here, for the connection's front that writes it
    /// (``ConnectionFront``).
    ///
    /// A playlist is rendered, an object answered whole or in part, a failure answered with its reason, or with a
    /// stale copy when the origin failed and one is fit to serve. Fills this request starts send the nodes it passed
    /// through on to a parent (loop detection).
    /// - Parameters:
    ///   - resolved: the origin object (not a read-ahead, which the responder answers 202).
    ///   - record: the access record; its origin URL and kind are filled in.
    ///   - verdict: the cache's verdict, when the caller looked the object up already (``lookUp(_:on:components:)``:
    ///     no entry of it is known, so no grace applies); `nil` looks it up here.
    static func origin(
        _ resolved: RequestResolution.ProxiedObject, record: AccessRecord, components: ServerComponents,
        verdict: Result<CacheVerdict, CacheError>? = nil
    ) async -> Answer {
        let record = record.naming(resolved)
        let planner = OriginAnswers(components: components)
        var answer = await FleetHop.$incoming.withValue(resolved.hops) { [record] in
            await planner.origin(resolved, record: record, verdict: verdict)
        }
        // A blocking reload held while a fill ran, however it is answered: CMSD says how long.
        if BlockingReload.isBlockingReload(resolved.url) { answer.noteHeld(since: record.start) }
        return answer
    }
}

/// The decisions of ``Answer/origin(_:record:components:)``: grace, the fetch, a rendering, stale-if-error.
private struct OriginAnswers {
    let components: ServerComponents

    /// Fetches through the cache and plans the answer: a playlist rendered, an object, or the failure (a stale
    /// copy instead when the origin failed).
    func origin(
        _ resolved: RequestResolution.ProxiedObject, record: AccessRecord, verdict: Result<CacheVerdict, CacheError>?
    ) async -> Answer {
        let key = resolved.key
        if verdict == nil, let stale = await Grace(components: components).answer(resolved, record: record) {
            return stale
        }
        let response: CacheResponse
        do {
            if let verdict {
                response = try await components.cache.fetch(resolved.fetchKey, freshness: .fresh, from: verdict.get())
            } else {
                response = try await components.cache.fetch(resolved.fetchKey, freshness: .fresh)
            }
        } catch {
            return failed(FetchFailure(error, url: key.url), resolved, record: record)
        }
        guard (200..<300).contains(response.metadata.status) else {
            let status = response.metadata.status
            if status == 404 || status == 410, components.liveHistory?.lists(segment: resolved.url) == true {
                return failed(
                    FetchFailure(goneFromHistory: resolved.url, originStatus: status), resolved, record: record)
            }
            return failed(FetchFailure(originStatus: status, url: resolved.url), resolved, record: record)
        }
        var answer = await answer(response, resolved, record: record)
        // Filled through a parent on this request: say what the parent's cache did.
        if response.disposition != .hit, let parentResult = response.upstreamCache {
            answer.setField(.xCacheParent, to: parentResult)
        }
        return answer
    }

    /// The answer for a 2xx cache response: an object, a manifest as stored (for a child node), or a manifest
    /// rendered.
    private func answer(
        _ response: CacheResponse, _ resolved: RequestResolution.ProxiedObject, record: AccessRecord
    ) async -> Answer {
        let result = result(of: response)
        guard response.metadata.objectKind.isManifest, !resolved.asStored else {
            return .object(
                response, requested: resolved.requested, result: result, record: record, components: components)
        }
        let key = resolved.key
        let rendered: RenderedPlaylist
        do {
            rendered = try await PlaylistRenderer(components: components, view: resolved.view).rendering(
                key: key, response: response)
        } catch {
            if error is InvalidMPDError || error is InvalidPlaylistError {
                // A stored manifest that no longer renders (a limit lowered since, or an entry from an older
                // release): removed, so that the next request fetches it anew rather than failing on it for ever.
                components.cache.invalidate(key)
            }
            return failed(FetchFailure(error, url: key.url), resolved, record: record)
        }
        return .playlist(rendered, metadata: response.metadata, result: result, record: record, components: components)
            ?? Answer(failure: .serviceUnavailable, reason: "out of file descriptors: try again", record: record)
    }

    private func result(of response: CacheResponse) -> CacheResult {
        guard response.isStored else { return .bypass }
        return response.disposition == .hit ? .hit : .miss
    }

    /// A failure's answer: a stale copy when the origin failed and one is fit to serve, else the failure itself.
    private func failed(
        _ failure: FetchFailure, _ resolved: RequestResolution.ProxiedObject, record: AccessRecord
    ) -> Answer {
        if let reason = failure.staleReason, let stale = staleAnswer(resolved, because: reason, record: record) {
            return stale
        }
        return failure.answer(record: record, logger: components.logger)
    }

    /// A stale copy for stale-if-error: live playlists up to three target durations old, anything else without
    /// limit.
    private func staleAnswer(
        _ resolved: RequestResolution.ProxiedObject, because reason: String, record: AccessRecord
    ) -> Answer? {
        let key = resolved.key
        guard let stale = components.cache.staleEntry(for: key) else { return nil }
        guard stale.metadata.objectKind.isManifest, !resolved.asStored else {
            components.logger.warning("serving stale", metadata: ["url": "\(key.url)", "reason": "\(reason)"])
            return .object(
                stale, requested: resolved.requested, result: .stale, record: record, components: components)
        }
        guard
            let (rendered, age) = PlaylistRenderer(components: components, view: resolved.view).staleRendering(
                key: key, response: stale)
        else { return nil }
        components.logger.warning(
            "serving stale playlist", metadata: ["url": "\(key.url)", "reason": "\(reason)", "age_s": "\(Int(age))"])
        return .playlist(rendered, metadata: stale.metadata, result: .stale, record: record, components: components)
    }
}

extension AccessRecord {
    /// This record with the origin object it asks for: its URL, and its kind as its URL tells it (until the origin's
    /// answer says).
    func naming(_ resolved: RequestResolution.ProxiedObject) -> AccessRecord {
        var record = self
        record.originURL = resolved.url
        record.kind = RequestKind(ObjectKind.guess(url: resolved.url))
        return record
    }
}
