import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OriginCache
import OriginClient
import SegmentCache
import Synchronization

/// Answers every request: hlscache's own routes (`/healthz`, `/metrics`, `/`) and proxied origin objects.
struct ProxyResponder: HTTPResponder {
    typealias Context = BasicRequestContext
    let components: ServerComponents

    func respond(to request: Request, context: Context) async throws -> Response {
        let exchange = Exchange(request: request, components: components)
        let resolution = RequestResolution(
            method: request.method, target: request.head.path ?? "/", range: request.headers[.range],
            components: components)
        switch resolution {
        case .own(.health):
            let draining = components.draining.load(ordering: .relaxed)
            return exchange.finish(
                draining ? .serviceUnavailable : .ok, text: draining ? "draining\n" : "ok\n", result: .bypass)
        case .own(.metrics):
            let body = components.metrics.render(cache: components.cache.statistics)
            return exchange.finish(.ok, body: body, contentType: "text/plain; version=0.0.4", result: .bypass)
        case .own(.status):
            let page = StatusPage.render(components: components)
            return exchange.finish(
                .ok, body: Array(page.utf8), contentType: "text/html; charset=utf-8", result: .bypass)
        case .refused(let status, let reason):
            return exchange.fail(status, reason)
        case .origin(let resolved):
            return await proxy(exchange, resolved)
        }
    }

    private func proxy(_ original: Exchange, _ resolved: RequestResolution.OriginRequest) async -> Response {
        var exchange = original
        let origin = resolved.url
        let requested = resolved.requested
        let key = resolved.key
        exchange.originURL = origin
        exchange.kind = RequestKind(ObjectKind.guess(url: origin))
        let response: CacheResponse
        do {
            response = try await components.cache.fetch(key, freshness: .fresh)
        } catch {
            return failedFetch(exchange, key: key, requested: requested, error: error)
        }
        guard (200..<300).contains(response.metadata.status) else {
            if response.metadata.status >= 500,
                let stale = staleResponse(
                    exchange, key: key, requested: requested, because: "origin answered \(response.metadata.status)")
            {
                return stale
            }
            return originStatus(exchange, status: response.metadata.status)
        }
        if response.metadata.objectKind == .hlsPlaylist {
            return await PlaylistResponder(components: components).respond(
                exchange, key: key, response: response, result: result(of: response))
        }
        return ObjectResponder(components: components).respond(
            exchange, response: response, requested: requested, result: result(of: response))
    }

    private func result(of response: CacheResponse) -> CacheResult {
        guard response.isStored else { return .bypass }
        return response.disposition == .hit ? .hit : .miss
    }

    /// The origin could not be fetched: serve a stale copy when the failure is the origin's, else say why.
    private func failedFetch(
        _ exchange: Exchange, key: CacheKey, requested: RequestedRange?, error: any Error
    ) -> Response {
        if let invalid = error as? InvalidPlaylistError {
            components.logger.warning(
                "invalid playlist", metadata: ["url": "\(invalid.url)", "error": "\(invalid.error)"])
            return exchange.fail(.badGateway, invalid.description)
        }
        guard let error = error as? OriginError else {
            components.logger.error("fetch failed", metadata: ["url": "\(key)", "error": "\(error)"])
            return exchange.fail(.badGateway, "fetch failed: \(error)")
        }
        switch error.kind {
        case .refused: return exchange.fail(.forbidden, "origin refused: \(error.reason)")
        case .invalidRequest: return exchange.fail(.badRequest, error.description)
        case .tooLarge: return exchange.fail(.badGateway, "\(error.description) (--max-object-size)")
        default: break
        }
        if let stale = staleResponse(exchange, key: key, requested: requested, because: error.description) {
            return stale
        }
        components.logger.warning("origin failed", metadata: ["url": "\(key.url)", "error": "\(error.description)"])
        if error.kind == .timeout { return exchange.fail(.gatewayTimeout, "origin timed out: \(error.description)") }
        return exchange.fail(.badGateway, "origin failed: \(error.description)")
    }

    /// A stale copy of `key` for stale-if-error: live playlists up to three target durations old, anything else
    /// without limit.
    private func staleResponse(
        _ exchange: Exchange, key: CacheKey, requested: RequestedRange?, because reason: String
    ) -> Response? {
        guard let stale = components.cache.staleEntry(for: key) else { return nil }
        if stale.metadata.objectKind == .hlsPlaylist {
            return PlaylistResponder(components: components).respondStale(
                exchange, key: key, response: stale, reason: reason)
        }
        components.logger.warning("serving stale", metadata: ["url": "\(key.url)", "reason": "\(reason)"])
        return ObjectResponder(components: components).respond(
            exchange, response: stale, requested: requested, result: .stale)
    }

    /// An origin's non-2xx answer, relayed: 403/404/410 and other 4xx with their status, 5xx as 502.
    private func originStatus(_ exchange: Exchange, status: Int) -> Response {
        let url = exchange.originURL ?? ""
        components.logger.warning("origin status", metadata: ["url": "\(url)", "status": "\(status)"])
        if (400..<500).contains(status) {
            return exchange.fail(HTTPResponse.Status(code: status), "origin answered \(status) for \(url)")
        }
        return exchange.fail(.badGateway, "origin answered \(status) for \(url)")
    }
}
