import HTTPTypes
import RequestHeads
import SegmentCache

/// `--cmcd-to-origin`: a player's CMCD goes on to the origin with a fill its request starts, as the player sent it
/// (the `CMCD` query parameter appended to the URL fetched, or the `CMCD-*` fields), through the key of the fill's
/// lookup (``RequestResolution/ProxiedObject/fetchKey``), whose ``CacheKey/originAdditions`` are never part of its
/// identity, and which no entry, map or log keeps: only the fill in flight holds them. Only a request's own fill carries it: a
/// joiner's, a read-ahead's or a refresh's other requests share the one fetch, and CDNs that forward CMCD do the same.
///
/// Only a report that parses is passed on (an invalid one is ignored everywhere, as the issue of
/// `hlscache_cmcd_invalid_total`), and a query value only of bytes a query may hold unescaped (the head's reader lets
/// through bytes a URL may not carry as they are).
extension RequestResolution.ProxiedObject {
    /// This object as `request` fetches it from the origin: with `--cmcd-to-origin` and a valid CMCD, its key carries
    /// the player's CMCD for a fill it starts (``fetchKey``).
    func passingCMCD(of request: ExchangeRequest, components: ServerComponents) -> Self {
        guard let report = request.cmcd, components.configuration.cmcdToOrigin,
            let additions = Self.additions(of: report)
        else { return self }
        var object = self
        object.originAdditions = additions
        return object
    }

    /// What a valid report adds to an origin request, or `nil`.
    static func additions(of report: CMCDReport) -> OriginAdditions? {
        guard case .success = report.data else { return nil }
        switch report.sent {
        case .query(let value):
            guard value.utf8.allSatisfy(isQueryByte) else { return nil }
            return OriginAdditions(queryParameter: "CMCD=" + value)
        case .headers(let fields):
            guard !fields.isEmpty else { return nil }
            return OriginAdditions(fields: fields.map { (name: $0.name.rawName, value: $0.value) })
        }
    }

    /// RFC 3986's `query` bytes less `&` and `;` (another parameter, to some origins) and `#`, with `%` for its escapes.
    private static func isQueryByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~%!$'()*+,=:@/?".utf8.contains(byte)
        }
    }
}

extension RequestResolution.ProxiedObject {
    /// The key the cache is asked for when the request may start a fill: ``key`` with the request's
    /// ``originAdditions``.
    var fetchKey: CacheKey { originAdditions.map(key.adding) ?? key }
}
