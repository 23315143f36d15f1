import ByteRanges
import HTTPTypes
import ManifestURLs
import OriginCache
import OriginClient
import SegmentCache
import Synchronization

/// What a request is for, decided once from its method, target and `Range` header: the one place that knows
/// hlscache's own routes, the target length limit, the forward and reverse forms, the userinfo and address-policy
/// refusals, and the cache key (by the cache's ``CacheKeyPolicy``). The event-loop hit path and the async responder both start from it.
enum RequestResolution {
    /// One of hlscache's own routes.
    case own(OwnRoute)
    /// A proxied origin object.
    case origin(ProxiedObject)
    /// Refused before any origin traffic: the status and the one-line reason.
    case refused(HTTPResponse.Status, String)

    /// hlscache's own routes.
    enum OwnRoute: Sendable {
        case health, metrics, status
        /// The player page (`/play?src=…`, forward mode).
        case player
        /// A CORS preflight (`OPTIONS`, any path).
        case preflight
        /// `PURGE` of a proxied object, with `--admin-token`: the entries of this key URL go.
        case purge(url: String)
        /// `POST /admin/purge`, with `--admin-token`: the entries under a URL prefix the request gives go.
        case purgePrefix

        /// Whether its answer carries no CORS grant: every own route but the preflight (the status page, the
        /// counters, health, the player page and the admin routes are not for other pages' scripts to read).
        var grantsNoCORS: Bool {
            if case .preflight = self { return false }
            return true
        }
    }

    /// The admin route's path (with `--admin-token` only; in reverse mode it is then not proxied).
    static let adminPurgePath = "/admin/purge"

    /// A request for an origin object, resolved.
    struct ProxiedObject: Sendable {
        /// The origin URL.
        var url: String
        /// The request's `Range`, if it has a usable one.
        var requested: RequestedRange?
        /// The cache key the request asks for.
        var key: CacheKey
        /// The hlscache nodes the request passed through (its `Via`): a child node's request, answered with
        /// manifests as stored (the child rewrites them itself); empty for a player's.
        var hops: [String] = []
        /// A fleet node's read-ahead (`X-HLSCache-Read-Ahead`): queue the fill here and answer 202 at once.
        var isReadAhead = false
        /// What a fill this request starts adds to its origin request (the player's CMCD with `--cmcd-to-origin`,
        /// ``passingCMCD(of:components:)``): given to the cache with ``fetchKey`` only, never kept.
        var originAdditions: OriginAdditions?
        /// The request's own manifest view (its `hlscache.*` parameters), checked; `nil` without one. Applied over
        /// the server's `--manifest-filter` when the object is a manifest, ignored otherwise.
        var view: ManifestView?

        /// Whether manifests are answered as the origin sent them, not rewritten: the request is a child node's.
        var asStored: Bool { !hops.isEmpty }
    }

    /// The request header a fleet node sends with its read-ahead (``ProxiedObject/isReadAhead``).
    static let readAheadHeader = HTTPField.Name("X-HLSCache-Read-Ahead")!

    /// Resolves a request.
    /// - Parameters:
    ///   - method: the request method.
    ///   - target: the request target (path and query) as received.
    ///   - range: the `Range` header, if any.
    ///   - via: the `Via` header, if any: a request that passed through this node already is refused (508).
    ///   - readAhead: ``readAheadHeader``'s value, if the request carries it: honoured only with a fleet
    ///     (`--fleet-url`) and, with `--fleet-token`, only when it is that token; ignored otherwise.
    ///   - view: the `hlscache.*` parameters taken out of the target (``ExchangeRequest/view``), if any: a
    ///     malformed one is refused (400).
    ///   - components: the configuration and the memoized address policy.
    init(
        method: HTTPRequest.Method, target: String, range: String?, via: String? = nil, readAhead: String? = nil,
        view: String? = nil, components: ServerComponents
    ) {
        // Read in place, field by field: a copy of the whole configuration costs a retain of each of its fields.
        let path = target.utf8.firstIndex(of: UInt8(ascii: "?")).map { String(target[..<$0]) } ?? target
        let isRead = method == .get || method == .head
        if method == .options {
            self = .own(.preflight)
            return
        }
        let hops = via.map(FleetHop.nodeNames(inVia:)) ?? []
        if !hops.isEmpty {
            let parent = components.configuration.fill.parent?.identity.name
            // Back at this node, or sent by this node's own parent (which no request of a tree ever is).
            if hops.contains(components.configuration.nodeName) || parent.map(hops.contains) == true
                || hops.count >= FleetHop.maxHops
            {
                self = .refused(
                    Self.loopDetected,
                    "hlscache loop: the request came to \(components.configuration.nodeName) through "
                        + hops.prefix(FleetHop.maxHops).joined(separator: " -> ")
                        + (parent.map { ", and \($0) is its parent" } ?? ""))
                return
            }
        }
        if components.configuration.adminToken != nil,
            let admin = Self.admin(method: method, target: target, path: path, components)
        {
            self = admin
            return
        }
        switch path {
        case "/healthz" where isRead:
            self = .own(.health)
            return
        case "/metrics" where method == .get:
            self = .own(.metrics)
            return
        case "/" where method == .get && components.configuration.reverseOrigin == nil:
            self = .own(.status)
            return
        case PlayerPage.path where method == .get && components.configuration.reverseOrigin == nil:
            self = .own(.player)
            return
        default: break
        }
        guard isRead else {
            self = .refused(.methodNotAllowed, "only GET, HEAD and OPTIONS are answered")
            return
        }
        guard target.utf8.count <= components.configuration.maxRequestTargetLength else {
            self = .refused(
                .uriTooLong, "request target longer than \(components.configuration.maxRequestTargetLength) bytes")
            return
        }
        guard let url = OriginTarget.originURL(for: target, reverseOrigin: components.configuration.reverseOrigin)
        else {
            self = .refused(.notFound, "no origin in \(target): use /o/<scheme>/<host>/<path> or --origin")
            return
        }
        if OriginTarget.isRefusedForward(target: target, origin: url) {
            self = .refused(.badRequest, "credentials in an origin URL are refused: remove user:password@")
            return
        }
        if OriginTarget.isLoop(
            url, listeningPort: components.listeningPort.load(ordering: .relaxed),
            listeningHost: components.configuration.host)
        {
            self = .refused(
                Self.loopDetected, "\(url) names this server itself, or another /o/ target: refused as a loop")
            return
        }
        if let refusal = components.addresses.refusal(for: url) {
            self = .refused(refusal.status, refusal.reason)
            return
        }
        var manifestView: ManifestView?
        if let view {
            do throws(ManifestViewError) {
                let parsed = try ManifestView(query: view)
                manifestView = parsed.isEmpty ? nil : parsed
            } catch {
                self = .refused(.badRequest, error.message)
                return
            }
        }
        // A manifest is rendered whole (RFC 9110 lets a server ignore `Range`): a part of one fetched for a player's
        // range would be rendered, and kept, as the whole.
        let requested =
            ObjectKind.guess(url: url).isManifest ? nil : range.flatMap(RequestedRange.init(header:))
        let key = components.origin.keys.key(origin: url, requested: requested)
        let isReadAhead = readAhead.map { FleetReadAhead.isPeer(readAhead: $0, components.configuration) } ?? false
        self = .origin(
            ProxiedObject(
                url: url, requested: requested, key: key, hops: hops, isReadAhead: isReadAhead, view: manifestView))
    }

    /// `508 Loop Detected` (RFC 5842): the answer to a request that came back round a loop of parents.
    static let loopDetected = HTTPResponse.Status(code: 508, reasonPhrase: "Loop Detected")

    /// Whether a request is for an admin route (`PURGE` of anything, anything at ``adminPurgePath``), when they exist.
    static func isAdmin(method: HTTPRequest.Method, path: String, _ components: ServerComponents) -> Bool {
        guard components.configuration.adminToken != nil else { return false }
        let bare = path.utf8.firstIndex(of: UInt8(ascii: "?")).map { String(path[..<$0]) } ?? path
        return method.rawValue == "PURGE" || bare == adminPurgePath
    }

    /// The admin routes, which exist only with `--admin-token`: `PURGE <proxied target>` and
    /// `POST /admin/purge` (the token itself is checked by the answer, which sees the headers).
    private static func admin(
        method: HTTPRequest.Method, target: String, path: String, _ components: ServerComponents
    ) -> RequestResolution? {
        if path == adminPurgePath {
            return method == .post ? .own(.purgePrefix) : .refused(.methodNotAllowed, "use POST \(adminPurgePath)")
        }
        guard method.rawValue == "PURGE" else { return nil }
        let configuration = components.configuration
        guard let url = OriginTarget.originURL(for: target, reverseOrigin: configuration.reverseOrigin) else {
            return .refused(.notFound, "no origin in \(target): PURGE /o/<scheme>/<host>/<path> or a reverse path")
        }
        return .own(.purge(url: components.origin.keys.identity(of: url)))
    }
}
