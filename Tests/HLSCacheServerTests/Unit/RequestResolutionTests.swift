import ByteRanges
import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import HTTPTypes
import Logging
import OriginCache
import OriginClient
import SegmentCache
import Testing

@testable import HLSCacheServer

/// One resolution decides what a request is for, for the hit path and the responder alike.
@Suite("Request resolution", .sharedMachine)
struct RequestResolutionTests {
    static func components(_ change: (inout ServerConfiguration) -> Void = { _ in }) throws -> ServerComponents {
        var configuration = ServerConfiguration()
        configuration.cacheDirectory = ServerProcess.temporaryDirectory()
        configuration.readAheadCount = 0
        change(&configuration)
        return try ServerComponents(configuration: configuration, logger: Logger(label: "test"))
    }

    static func status(_ resolution: RequestResolution) -> Int? {
        if case .refused(let status, _) = resolution { return status.code }
        return nil
    }

    @Test("own routes, refusals and origin requests, each decided in one place")
    func resolves() throws {
        let components = try Self.components()
        func resolve(_ target: String, method: HTTPRequest.Method = .get, range: String? = nil) -> RequestResolution {
            RequestResolution(method: method, target: target, range: range, components: components)
        }
        guard case .own(.health) = resolve("/healthz?x=1") else { Issue.record("healthz"); return }
        guard case .own(.metrics) = resolve("/metrics") else { Issue.record("metrics"); return }
        guard case .own(.status) = resolve("/") else { Issue.record("status"); return }
        #expect(Self.status(resolve("/o/https/example.com/a.ts", method: .post)) == 405)
        #expect(Self.status(resolve("/o/https/example.com/a.ts", method: .connect)) == 405)
        #expect(Self.status(resolve("/o/ftp/example.com/a.ts")) == 404)
        #expect(Self.status(resolve("/o/https/" + String(repeating: "a", count: 9000))) == 414)
        #expect(Self.status(resolve("/o/https/user:pw@example.com/a.ts")) == 400)
        // Addresses are checked when the origin client connects; the host patterns here, before any traffic.
        let listed = try Self.components {
            $0.fill.addressPolicy = AddressPolicy(allowedHosts: ["cdn.example", "*.media.example"])
        }
        func verdict(_ target: String) -> Int? {
            Self.status(RequestResolution(method: .get, target: target, range: nil, components: listed))
        }
        #expect(verdict("/o/https/other.example/a.ts") == 403)
        #expect(verdict("/o/https/cdn.example/a.ts") == nil)
        #expect(verdict("/o/https/a.media.example/a.ts") == nil)
        guard case .origin(let request) = resolve("/o/https/example.com/a.ts?t=1", range: "bytes=10-19") else {
            Issue.record("origin")
            return
        }
        #expect(request.url == "https://example.com/a.ts?t=1")
        #expect(request.requested == .closed(first: 10, last: 19))
        #expect(request.key == CacheKey(url: "https://example.com/a.ts?t=1", range: ByteRange(offset: 10, length: 10)))
        guard
            case .origin(let open) = resolve(
                "/o/https/example.com/a.ts", method: .head, range: "bytes=0-9223372036854775807")
        else {
            Issue.record("open range")
            return
        }
        #expect(open.key.range == nil)
    }

    @Test("in reverse mode the status page belongs to the origin, and its own userinfo is the operator's")
    func reverseMode() throws {
        let components = try Self.components { $0.reverseOrigin = "https://user:pw@origin.example/base" }
        guard case .origin(let root) = RequestResolution(method: .get, target: "/", range: nil, components: components)
        else {
            Issue.record("root")
            return
        }
        #expect(root.url == "https://user:pw@origin.example/base/")
    }

    @Test("a Via naming this node is a loop (508); one naming other hlscache nodes asks for manifests as stored")
    func fleetHops() throws {
        let components = try Self.components {
            $0.nodeName = "edge1"
            $0.fleetURL = "http://127.0.0.1:9"
        }
        func resolve(via: String?, readAhead: String? = nil) -> RequestResolution {
            RequestResolution(
                method: .get, target: "/o/https/example.com/a.m3u8", range: nil, via: via, readAhead: readAhead,
                components: components)
        }
        #expect(Self.status(resolve(via: "1.1 shield (hlscache), 1.1 edge1 (hlscache)")) == 508)
        let tooMany = (0..<FleetHop.maxHops).map { "1.1 n\($0) (hlscache)" }.joined(separator: ", ")
        #expect(Self.status(resolve(via: tooMany)) == 508)
        guard case .origin(let child) = resolve(via: "1.0 squid, 1.1 edge2 (hlscache)") else {
            Issue.record("child")
            return
        }
        #expect(child.hops == ["edge2"] && child.asStored && !child.isReadAhead)
        guard case .origin(let player) = resolve(via: "1.1 squid (squid/6.1)", readAhead: "1") else {
            Issue.record("player")
            return
        }
        #expect(player.hops.isEmpty && !player.asStored && player.isReadAhead)
    }

    @Test("the fleet's read-ahead header is honoured only with a fleet, and with a fleet token only when it carries it")
    func readAheadOnlyFromPeers() throws {
        func isReadAhead(_ value: String, _ change: @escaping (inout ServerConfiguration) -> Void) throws -> Bool {
            let components = try Self.components(change)
            guard
                case .origin(let resolved) = RequestResolution(
                    method: .get, target: "/o/https/example.com/a.ts", range: nil, readAhead: value,
                    components: components)
            else { return false }
            return resolved.isReadAhead
        }
        // No fleet (the probe's case: 960 bytes of such requests made a lone node fetch 320 MB): ignored.
        #expect(try !isReadAhead("1") { _ in })
        #expect(try isReadAhead("1") { $0.fleetURL = "http://127.0.0.1:9" })
        let token = "0123456789abcdef-fleet"
        let withToken: (inout ServerConfiguration) -> Void = {
            $0.fleetURL = "http://127.0.0.1:9"
            $0.fleetToken = token
        }
        #expect(try isReadAhead(token, withToken))
        #expect(try !isReadAhead("1", withToken))
        #expect(try !isReadAhead(token + "x", withToken))
        #expect(try !isReadAhead(String(token.dropLast()), withToken))
    }
}
