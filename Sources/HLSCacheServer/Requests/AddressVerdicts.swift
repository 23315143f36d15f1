import HTTPTypes
import OriginClient
import SegmentCache
import Synchronization

/// The address policy's verdicts by `scheme://authority`, remembered so that a hit checks no host pattern: the
/// answer depends only on the authority. Checked on hits too, so a host taken off the allowed list is not served
/// from the cache either. Bounded: 4,096 authorities, the least used going first.
final class AddressVerdicts: Sendable {
    /// Why a URL is refused.
    struct Refusal: Sendable {
        /// 400 (no host) or 403 (the policy refuses it).
        var status: HTTPResponse.Status
        /// The one-line reason.
        var reason: String
    }

    /// The policy, built once (its host patterns are parsed at creation).
    let policy: AddressPolicy
    private let known = Mutex(ClockMap<String, Refusal?>(capacity: 4096))

    /// Verdicts of `policy`.
    init(policy: AddressPolicy) {
        self.policy = policy
    }

    /// Why `url` is refused, or `nil` when the policy lets it through.
    func refusal(for url: String) -> Refusal? {
        guard let schemeEnd = ByteSearch.offset(of: "://", in: url) else {
            return Refusal(status: .badRequest, reason: "cannot read a host in \(url)")
        }
        // `scheme://authority`: the URL up to its path, query or fragment.
        let origin = ByteSearch.prefix(of: url, from: schemeEnd + 3, stoppingAt: "/?#")
        if let verdict = known.withLock({ $0.value(forKey: origin) }) { return verdict }
        let verdict: Refusal?
        if let host = OriginTarget.host(of: origin + "/"), !host.isEmpty {
            do {
                try policy.check(host: host, port: OriginTarget.port(of: origin))
                verdict = nil
            } catch {
                verdict = Refusal(status: .forbidden, reason: "origin refused: \(error.reason)")
            }
        } else {
            verdict = Refusal(status: .badRequest, reason: "cannot read a host in \(url)")
        }
        known.withLock { _ = $0.insert(verdict, forKey: origin) }
        return verdict
    }
}
