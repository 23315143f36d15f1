import HTTPTypes
import OriginCache

/// What a request asked for, as counted by `hlscache_requests_total{kind}`.
enum RequestKind: String, Sendable, CaseIterable {
    case playlist, segment, key, other

    /// The kind's place in ``allCases``.
    var index: Int {
        switch self {
        case .playlist: 0
        case .segment: 1
        case .key: 2
        case .other: 3
        }
    }

    /// The metrics kind of an object kind (stored with the entry, or guessed from the URL before a fetch).
    init(_ kind: ObjectKind) {
        switch kind {
        case .hlsPlaylist, .dashManifest: self = .playlist
        case .media: self = .segment
        case .key: self = .key
        case .unknown, .other: self = .other
        }
    }
}

/// How a request was answered, as counted by `hlscache_requests_total{cache}` and sent in `X-Cache`.
enum CacheResult: String, Sendable, CaseIterable {
    case hit, miss, stale, bypass, error

    /// The `X-Cache` header value.
    var header: String {
        switch self {
        case .hit: "HIT"
        case .miss: "MISS"
        case .stale: "STALE"
        case .bypass: "BYPASS"
        case .error: "ERROR"
        }
    }

    /// The `X-Cache` field an answer carries (none for an error), made once per result.
    var xCacheField: HTTPField? { Self.xCacheFields[index] }

    /// The result's place in ``allCases``.
    var index: Int {
        switch self {
        case .hit: 0
        case .miss: 1
        case .stale: 2
        case .bypass: 3
        case .error: 4
        }
    }

    private static let xCacheFields: [HTTPField?] = allCases.map {
        $0 == .error ? nil : HTTPField(name: .xCache, value: $0.header)
    }
}
