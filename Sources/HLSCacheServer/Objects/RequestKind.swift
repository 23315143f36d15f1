import OriginCache

/// What a request asked for, as counted by `hlscache_requests_total{kind}`.
enum RequestKind: String, Sendable, CaseIterable {
    case playlist, segment, key, other

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
    var header: String { rawValue.uppercased() }
}
