import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import OriginCache
import OriginClient
import SegmentCache
import Synchronization

/// Answers the requests ``ConnectionFront`` does not read itself, after the HTTP/1 decoder: those of a connection from
/// its first request the front's scanner does not read whole (a body, another method such as `PURGE` or `POST`,
/// HTTP/1.0, an unusual field), and those of a connection over the cap or shutting down. It routes each as the front
/// does (``Answer/route(_:resolution:record:components:)``) and writes the answer as a Hummingbird response.
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
        switch Answer.route(facts, resolution: resolution, record: record, components: components) {
        case .now(let answer):
            return answer
        case .origin(let resolved, let record):
            return await Answer.origin(resolved, record: record, components: components)
        case .purge(let target, let record):
            return await AdminPurge(components: components).answer(target, request: request, record: record)
        }
    }
}
