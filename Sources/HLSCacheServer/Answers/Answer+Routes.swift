import HTTPTypes
import NIOCore
import OriginCache
import RequestHeads
import SegmentCache
import Synchronization

extension Answer {
    /// What a request's ``RequestResolution`` is answered with, decided here for every connection handler: an answer
    /// made now (hlscache's own pages and counters, a preflight, a refusal, a fleet read-ahead taken), an origin
    /// object to plan (``origin(_:record:components:verdict:)``), or a purge (``AdminPurge``, which reads the
    /// request's body).
    enum Routed {
        /// Answered now.
        case now(Answer)
        /// An origin object: planned from the cache's verdict, off the event loop.
        case origin(RequestResolution.ProxiedObject, AccessRecord)
        /// A purge, with the admin token to check.
        case purge(AdminPurge.Target, AccessRecord)
    }

    /// Routes `request`, resolved to `resolution`.
    /// - Parameters:
    ///   - request: the request's facts.
    ///   - resolution: what it resolved to (``ResolutionMemo``).
    ///   - record: its access record; its CORS grant goes for hlscache's own routes and the admin routes' refusals.
    ///   - components: the server's configuration, counters and read-ahead queue.
    static func route(
        _ request: ExchangeRequest, resolution: RequestResolution, record: AccessRecord, components: ServerComponents
    ) -> Routed {
        var record = record
        if case .own(let route) = resolution, route.grantsNoCORS {
            // hlscache's own pages, counters and admin answers are for the operator, not for any page's script.
            record.cors = .none
        } else if RequestResolution.isAdmin(method: request.method, path: request.target, components) {
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
            return .now(
                Answer(
                    draining ? .serviceUnavailable : .ok, buffer: ByteBuffer(string: draining ? "draining\n" : "ok\n"),
                    contentType: "text/plain; charset=utf-8", result: .bypass, record: record, headers: headers))
        case .own(.metrics):
            let body = components.metrics.render(cache: components.cache.statistics)
            return .now(
                Answer(
                    .ok, buffer: ByteBuffer(bytes: body), contentType: "text/plain; version=0.0.4", result: .bypass,
                    record: record))
        case .own(.status):
            let page = StatusPage.render(components: components)
            return .now(
                Answer(
                    .ok, buffer: ByteBuffer(string: page), contentType: "text/html; charset=utf-8", result: .bypass,
                    record: record))
        case .own(.player):
            guard let page = PlayerPage.render(target: request.target) else {
                return .now(Answer(failure: .badRequest, reason: "give src=/o/<scheme>/<host>/<path>", record: record))
            }
            return .now(
                Answer(
                    .ok, buffer: ByteBuffer(string: page), contentType: "text/html; charset=utf-8", result: .bypass,
                    record: record))
        case .own(.preflight):
            return .now(Answer(preflightAsking: request.accessControlRequestHeaders, record: record))
        case .own(.purge(let url)):
            return .purge(.url(url), record)
        case .own(.purgePrefix):
            return .purge(.prefix, record)
        case .refused(let status, let reason):
            return .now(Answer(failure: status, reason: reason, record: record))
        case .origin(let resolved):
            guard resolved.isReadAhead else {
                return .origin(resolved.passingCMCD(of: request, components: components), record)
            }
            components.ownReadAhead.enqueue([resolved.key])
            components.metrics.fleetReadAheadQueued()
            return .now(
                Answer(
                    .accepted, headers: [:], body: .none, length: 0, result: .bypass, record: record.naming(resolved)))
        }
    }
}
