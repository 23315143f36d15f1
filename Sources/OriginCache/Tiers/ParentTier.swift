import Foundation
import HLSPlaylist
import ManifestURLs
import OriginClient
import Synchronization

/// A parent hlscache that every origin fetch goes through (`--parent`): the shield tier.
///
/// An origin URL is fetched as the parent's forward-mode URL (`<base>/o/<scheme>/<host>/<path>?<query>`) with this
/// node's `Via` element, so the parent answers manifests as the origin sent them and refuses a loop.
public struct ParentTier: Sendable, Equatable {
    /// The parent's base URL without trailing slashes: `http(s)://host[:port][/prefix]`.
    public let base: String
    /// The parent's host, which this node's origin client may reach even on a private address.
    public let host: String
    /// This node's name, sent in `Via`.
    public let nodeName: String
    /// The parent's own name, once learned (its `/healthz` says it): a request that came through the parent is a
    /// loop, refused at once even when the fill it would join is the one waiting on the parent.
    public let identity = ParentIdentity()
    /// A PEM file of the certificate authority that signed an `https` parent's certificate (`--parent-ca`: a private
    /// CA); `nil`: the system's authorities. The parent's certificate is verified either way.
    public var certificateAuthority: String?

    /// Tiers are equal when they send the same node's requests to the same parent.
    public static func == (lhs: ParentTier, rhs: ParentTier) -> Bool {
        lhs.base == rhs.base && lhs.nodeName == rhs.nodeName && lhs.certificateAuthority == rhs.certificateAuthority
    }

    /// A parent at `url`.
    /// - Parameters:
    ///   - url: an absolute `http` or `https` URL without query, fragment or userinfo.
    ///   - nodeName: this node's name (``FleetHop/isValidName(_:)``).
    /// - Throws: ``FleetConfigurationError`` when the URL or the name is unusable.
    public init(url: String, nodeName: String) throws(FleetConfigurationError) {
        guard FleetHop.isValidName(nodeName) else { throw .invalidNodeName(nodeName) }
        let (base, host) = try Self.base(of: url, option: "--parent")
        self.base = base
        self.host = host
        self.nodeName = nodeName
    }

    /// The URL the parent serves `origin` at.
    /// - Parameter origin: an absolute `http`/`https` origin URL.
    /// - Returns: the parent's forward-mode URL, or `nil` when `origin` is not an absolute http(s) URL.
    public func url(for origin: String) -> String? { ProxyURL.make(origin: origin, base: base) }

    /// The `Via` header this node sends its parent: the nodes the request it fills for passed through
    /// (``FleetHop/incoming``), then this one.
    var via: (name: String, value: String) { FleetHop.via(nodeName: nodeName) }

    /// Checks a base URL given for a fleet option and returns it without trailing slashes, with its host.
    /// - Parameters:
    ///   - url: the option's value.
    ///   - option: the option's name, for the error.
    /// - Throws: ``FleetConfigurationError/invalidURL(option:url:)`` unless it is an absolute http(s) URL with a
    ///   host and no userinfo, query or fragment.
    public static func base(
        of url: String, option: String
    ) throws(FleetConfigurationError) -> (
        base: String, host: String
    ) {
        guard let origin = HTTPOrigin(url: url), !origin.hasMoreThanABase else {
            throw .invalidURL(option: option, url: url)
        }
        var base = Substring(url)
        while base.hasSuffix("/") { base = base.dropLast() }
        return (String(base), origin.host)
    }
}

/// A fleet option that cannot be used: what is wrong, and what to give instead.
public struct FleetConfigurationError: Error, CustomStringConvertible, Equatable {
    /// The message, naming the option.
    public let description: String

    /// A URL option that is not an absolute http(s) base URL.
    static func invalidURL(option: String, url: String) -> FleetConfigurationError {
        FleetConfigurationError(
            description:
                "\(option) must be an absolute http(s) base URL without user:password, query or fragment, "
                + "such as http://10.0.0.5:8080 (got \(url.count > 200 ? String(url.prefix(200)) + "…" : url))")
    }

    /// A node name that cannot stand in a `Via` header.
    static func invalidNodeName(_ name: String) -> FleetConfigurationError {
        FleetConfigurationError(
            description: "--node-name must be 1 to 64 letters, digits, '.', '-' or '_' (got \(name.prefix(80)))")
    }
}

/// The parent answered `508 Loop Detected`: this node's request came back to a node it had passed through.
public struct ParentLoopError: Error, CustomStringConvertible {
    /// The origin URL being fetched.
    public let url: String
    /// The parent's base URL.
    public let parent: String
    /// The parent's one-line reason (it names the nodes of the loop).
    public let reason: String

    /// `parent loop: …`, with what to change.
    public var description: String {
        "parent loop: \(parent) answered 508 (\(reason)): no node may be its own parent, directly or through "
            + "others; check --parent on each node"
    }
}

/// What a node has learned of its parent: the name it answers with (``FleetHop/nodeHeader``), new at each start.
public final class ParentIdentity: Sendable {
    private let learned = Mutex<String?>(nil)

    /// An identity not learned yet.
    public init() {}

    /// The parent's name, if learned.
    public var name: String? { learned.withLock { $0 } }

    /// Records the parent's name.
    /// - Parameter name: what the parent's `/healthz` said.
    /// - Returns: whether it differs from what was known.
    @discardableResult
    public func learn(_ name: String) -> Bool {
        learned.withLock { known in
            defer { known = name }
            return known != name
        }
    }
}
