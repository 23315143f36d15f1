import ByteRanges
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import RequestHeads
import SegmentCache

/// The request path as the server takes a request, from its head (the scanner's, or the HTTP/1 decoder's) to the plan
/// of its answer, with no socket: for the fuzzing harness (`hlscache-fuzz-exchange exchange`), which runs it over hostile heads
/// so that a trap anywhere on the way (the scanner, the decoder's head and its refusals, the resolution with its
/// address verdict, range and key, the route, the object head, the preflight, the answer's head bytes, the access
/// record's fields) is a crash it reports. Each origin object is planned as a hit on an object of a few lengths.
package final class RequestPathProbe: Sendable {
    private let components: ServerComponents

    /// A probe with a server's parts on a cache in `cacheDirectory` (nothing is fetched or stored).
    /// - Parameters:
    ///   - cacheDirectory: an empty directory.
    ///   - reverseOrigin: the reverse mode's origin, if any.
    package init(cacheDirectory: String, reverseOrigin: String? = nil) throws {
        var configuration = ServerConfiguration()
        configuration.cacheDirectory = cacheDirectory
        configuration.readAheadCount = 0
        configuration.reverseOrigin = reverseOrigin
        configuration.adminToken = "fuzz-admin-token-0123456789"
        configuration.fleetURL = "http://127.0.0.1:9"
        components = try ServerComponents(configuration: configuration, logger: Logger(label: "fuzz"))
    }

    /// Plans the answer to the head at the start of `bytes`, if the scanner reads one there.
    /// - Returns: the planned statuses (one per object length tried), or `nil` when no head was read.
    package func plan(_ bytes: [UInt8]) -> [Int]? {
        guard case .request(let request, _) = RequestHeadScanner.scan(ByteBuffer(bytes: bytes)) else { return nil }
        return plan(request)
    }

    /// Plans the answer to a head the HTTP/1 decoder read, as ``DecodedRequests`` gives it to the front.
    /// - Returns: the planned statuses (one per object length tried; the refusal's).
    package func plan(decoded head: HTTPRequestHead) -> [Int] {
        switch DecodedHead(head) {
        case .refused(let status, _): [status.code]
        case .request(let request): plan(request)
        }
    }

    /// Plans the answer to `request`: resolved, routed, and, for an origin object, planned as a hit of a few lengths.
    private func plan(_ request: ExchangeRequest) -> [Int] {
        let resolution = ResolutionMemo.remembered(request, components: components).resolution
        let record = AccessRecord(
            method: request.method.rawValue, path: request.target, id: "fuzz", start: .now,
            cors: components.configuration.cors.grant(requestOrigin: request.origin))
        _ = record.logFields(status: 200, bytes: 0, result: .hit, milliseconds: 0)
        switch Answer.route(request, resolution: resolution, record: record, components: components) {
        case .now(let answer):
            var head = ByteBuffer()
            answer.writeHead(closing: request.closes, http10: request.isHTTP10, into: &head)
            return [answer.status.code]
        case .purge:
            // Its token is checked, and nothing purged, with a wrong one.
            _ = AdminPurge.refusal(authorization: request.authorization, record: record, components)
            return [200]
        case .origin(let resolved, _):
            var statuses: [Int] = []
            for length: Int64 in [0, 1, 1000, 1 << 40, .max] {
                let contentLength = resolved.key.range?.length ?? length
                let metadata = EntryMetadata(
                    key: resolved.key, status: 200, contentType: "video/mp2t", contentLength: contentLength,
                    fetchedAt: Date(), completeLength: resolved.key.range == nil ? nil : length)
                switch ObjectHead.make(
                    metadata: metadata, requested: resolved.requested, result: .hit, cmsd: components.cmsd)
                {
                case .send(let head): statuses.append(head.status.code)
                case .unsatisfiable: statuses.append(416)
                }
            }
            return statuses
        }
    }
}
