import ByteRanges
import HLSPlaylist
import HTTPTypes
import ManifestURLs
import OriginClient
import SegmentCache

/// Read-ahead through the fleet's load balancer (`--fleet-url`): each key is asked for as a player will ask for it
/// (the same path, so the balancer's hash picks the node that owns it) with ``RequestResolution/readAheadHeader``;
/// that node queues the fill in its own read-ahead and answers 202 at once. The origin then sees one fetch per object
/// for the whole fleet, where a node filling its own cache would fetch segments the balancer sends to others.
final class FleetReadAhead: Sendable {
    /// The balancer's base URL, without trailing slashes.
    let base: String
    private let mapping: URIMapping
    private let client: OriginClient
    /// The header's value: the fleet token, or `1` without one.
    private let token: String

    /// A read-ahead sender to the balancer at `base`.
    /// - Parameters:
    ///   - base: the balancer's base URL (checked by ``ParentTier/base(of:option:)``).
    ///   - host: its host, which the client may reach even on a private or loopback address.
    ///   - configuration: the reverse origin, which decides the paths players are given.
    /// - Throws: when the HTTP client cannot start.
    init(base: String, host: String, configuration: ServerConfiguration) throws {
        self.base = base
        token = configuration.fleetToken ?? "1"
        mapping = PlayerURIs.mapping(configuration, base: "")
        let timeouts = OriginTimeouts(
            connect: .seconds(2), firstByte: .seconds(5), stall: .seconds(5), total: .seconds(10))
        var clientConfiguration = OriginClientConfiguration(
            policy: AddressPolicy(allowedHosts: [host], allowPrivateNetworks: false), timeouts: timeouts,
            maxRedirects: 0, maxRetries: 0)
        // Read-ahead requests are answered 202 with no body: one thread carries them all.
        clientConfiguration.workerThreads = 1
        clientConfiguration.threadName = "hlscache-ahead"
        client = try OriginClient(configuration: clientConfiguration)
    }

    /// Asks the owner of `key` to fill it.
    /// - Throws: ``OriginError`` when the balancer cannot be reached or does not answer 202.
    func send(_ key: CacheKey) async throws {
        guard let path = mapping.map(key.fetchURL) else { return }
        let request = OriginRequest(
            url: base + path, byteRange: key.range.flatMap(RequestedRange.init),
            headers: [(RequestResolution.readAheadHeader.rawName, token)])
        let response = try await client.fetch(request)
        // Anything but the owner's 202 (a node that does not know the header sends the whole object): not read.
        guard response.status == 202 else { throw OriginError.httpStatus(response.status, url: base + path) }
        for try await _ in response.body {}
    }

    /// Whether a request's ``RequestResolution/readAheadHeader`` value comes from a peer: only with a fleet
    /// (`--fleet-url`), and with `--fleet-token` only when it is that token (compared in constant time). Otherwise
    /// the header is ignored, and the request is an ordinary one: a viewer cannot make a node fetch what it names.
    static func isPeer(readAhead value: String, _ configuration: ServerConfiguration) -> Bool {
        guard configuration.fleetURL != nil else { return false }
        guard let token = configuration.fleetToken else { return true }
        let given = Array(value.utf8)
        let expected = Array(token.utf8)
        var difference = given.count ^ expected.count
        for index in 0..<expected.count {
            difference |= Int(expected[index] ^ (index < given.count ? given[index] : 0))
        }
        return difference == 0
    }
}
