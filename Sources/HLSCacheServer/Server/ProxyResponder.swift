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
        if let hosts = HTTPField.Name(CloseNormalizer.invalidHostField).flatMap({ request.headers[$0] }) {
            return Answer(
                failure: .badRequest, reason: "a request needs exactly one Host field, not \(hosts)", record: record)
        }
        let facts = ExchangeRequest(method: request.method, target: request.head.path ?? "/", fields: request.headers)
        let resolution = ResolutionMemo.remembered(facts, components: components).resolution
        var record = record
        if case .own(let route) = resolution, route.grantsNoCORS {
            // hlscache's own pages, counters and admin answers are for the operator, not for any page's script.
            record.cors = .none
        } else if RequestResolution.isAdmin(method: request.method, path: request.head.path ?? "/", components) {
            // The admin routes' refusals too (a wrong method, a PURGE of no origin).
            record.cors = .none
        }
        switch resolution {
        case .own(.health):
            let draining = components.draining.load(ordering: .relaxed)
            var headers: HTTPFields = [HTTPField.Name(FleetHop.nodeHeader)!: components.configuration.nodeName]
            if let parent = components.configuration.fill.parent?.identity.name {
                headers[HTTPField.Name(FleetHop.parentNodeHeader)!] = parent
            }
            return Answer(
                draining ? .serviceUnavailable : .ok, buffer: ByteBuffer(string: draining ? "draining\n" : "ok\n"),
                contentType: "text/plain; charset=utf-8", result: .bypass, record: record, headers: headers)
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
            if resolved.isReadAhead {
                let record = record.naming(resolved)
                components.ownReadAhead.enqueue([resolved.key])
                components.metrics.fleetReadAheadQueued()
                return Answer(.accepted, headers: [:], body: .none, length: 0, result: .bypass, record: record)
            }
            return await Answer.origin(resolved, record: record, components: components)
        }
    }
}
