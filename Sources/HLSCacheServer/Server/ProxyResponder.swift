import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OriginCache
import OriginClient
import SegmentCache
import Synchronization

/// Answers every request the event-loop hit path leaves to Hummingbird: hlscache's own routes (`/healthz`,
/// `/metrics`, `/`) and proxied origin objects (misses, fills in flight, stale copies, errors). It plans each
/// answer (``Answer``) from the request's ``RequestResolution`` and writes it as a Hummingbird response.
struct ProxyResponder: HTTPResponder {
    typealias Context = BasicRequestContext
    let components: ServerComponents

    func respond(to request: Request, context: Context) async throws -> Response {
        let record = AccessRecord(
            method: request.method.rawValue, path: request.head.path ?? "",
            id: components.observability.nextRequestID(), start: .now,
            cors: components.configuration.cors.grant(requestOrigin: request.headers[.origin]))
        return await answer(request, record: record).response(components: components)
    }

    private func answer(_ request: Request, record: AccessRecord) async -> Answer {
        let resolution = RequestResolution(
            method: request.method, target: request.head.path ?? "/", range: request.headers[.range],
            via: request.headers[.via], isReadAhead: request.headers[RequestResolution.readAheadHeader] != nil,
            components: components)
        switch resolution {
        case .own(.health):
            let draining = components.draining.load(ordering: .relaxed)
            return Answer(
                draining ? .serviceUnavailable : .ok, buffer: ByteBuffer(string: draining ? "draining\n" : "ok\n"),
                contentType: "text/plain; charset=utf-8", result: .bypass, record: record,
                headers: [HTTPField.Name(FleetHop.nodeHeader)!: components.configuration.nodeName])
        case .own(.metrics):
            let body = components.metrics.render(cache: components.cache.statistics)
            return Answer(
                .ok, buffer: ByteBuffer(bytes: body), contentType: "text/plain; version=0.0.4", result: .bypass,
                record: record)
        case .own(.status):
            let page = StatusPage.render(components: components)
            return Answer(
                .ok, buffer: ByteBuffer(string: page), contentType: "text/html; charset=utf-8", result: .bypass,
                record: record)
        case .own(.player):
            guard let page = PlayerPage.render(target: request.head.path ?? "") else {
                return Answer(failure: .badRequest, reason: "give src=/o/<scheme>/<host>/<path>", record: record)
            }
            return Answer(
                .ok, buffer: ByteBuffer(string: page), contentType: "text/html; charset=utf-8", result: .bypass,
                record: record)
        case .own(.preflight):
            return Answer(preflightAsking: request.headers[.accessControlRequestHeaders], record: record)
        case .own(.purge(let url)):
            return await AdminPurge(components: components).answer(.url(url), request: request, record: record)
        case .own(.purgePrefix):
            return await AdminPurge(components: components).answer(.prefix, request: request, record: record)
        case .refused(let status, let reason):
            return Answer(failure: status, reason: reason, record: record)
        case .origin(let resolved):
            var record = record
            record.originURL = resolved.url
            record.kind = RequestKind(ObjectKind.guess(url: resolved.url))
            if resolved.isReadAhead {
                components.ownReadAhead.enqueue([resolved.key])
                components.metrics.fleetReadAheadQueued()
                return Answer(.accepted, headers: [:], body: .none, length: 0, result: .bypass, record: record)
            }
            // Fills started for this request send the nodes it passed through on to a parent (loop detection).
            return await FleetHop.$incoming.withValue(resolved.hops) { await origin(resolved, record: record) }
        }
    }

    /// Fetches through the cache and plans the answer: a playlist rendered, an object, or the failure (a stale
    /// copy instead when the origin failed).
    private func origin(_ resolved: RequestResolution.OriginRequest, record: AccessRecord) async -> Answer {
        let key = resolved.key
        if let stale = await Grace(components: components).answer(resolved, record: record) { return stale }
        let response: CacheResponse
        do {
            response = try await components.cache.fetch(key, freshness: .fresh)
        } catch {
            return failed(FetchFailure(error, url: key.url), resolved, record: record)
        }
        guard (200..<300).contains(response.metadata.status) else {
            return failed(
                FetchFailure(originStatus: response.metadata.status, url: resolved.url), resolved, record: record)
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
        _ response: CacheResponse, _ resolved: RequestResolution.OriginRequest, record: AccessRecord
    ) async -> Answer {
        let result = result(of: response)
        guard response.metadata.objectKind.isManifest, !resolved.asStored else {
            return .object(
                response, requested: resolved.requested, result: result, record: record, components: components)
        }
        let key = resolved.key
        let rendered: RenderedPlaylist
        do {
            rendered = try await PlaylistRenderer(components: components).rendering(key: key, response: response)
        } catch {
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
        _ failure: FetchFailure, _ resolved: RequestResolution.OriginRequest, record: AccessRecord
    ) -> Answer {
        if let reason = failure.staleReason, let stale = staleAnswer(resolved, because: reason, record: record) {
            return stale
        }
        return failure.answer(record: record, logger: components.logger)
    }

    /// A stale copy for stale-if-error: live playlists up to three target durations old, anything else without
    /// limit.
    private func staleAnswer(
        _ resolved: RequestResolution.OriginRequest, because reason: String, record: AccessRecord
    ) -> Answer? {
        let key = resolved.key
        guard let stale = components.cache.staleEntry(for: key) else { return nil }
        guard stale.metadata.objectKind.isManifest, !resolved.asStored else {
            components.logger.warning("serving stale", metadata: ["url": "\(key.url)", "reason": "\(reason)"])
            return .object(
                stale, requested: resolved.requested, result: .stale, record: record, components: components)
        }
        guard let (rendered, age) = PlaylistRenderer(components: components).staleRendering(key: key, response: stale)
        else { return nil }
        components.logger.warning(
            "serving stale playlist", metadata: ["url": "\(key.url)", "reason": "\(reason)", "age_s": "\(Int(age))"])
        return .playlist(rendered, metadata: stale.metadata, result: .stale, record: record, components: components)
    }
}
