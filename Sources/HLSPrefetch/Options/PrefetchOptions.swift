import ManifestURLs

/// What `hlscache prefetch` fetches and how hard it tries.
public struct PrefetchOptions: Sendable {
    /// Which variant streams of a multivariant playlist to fetch.
    public enum VariantSelection: Sendable, Hashable {
        /// Every variant stream.
        case all
        /// The one with the highest BANDWIDTH.
        case best
        /// The one with the lowest BANDWIDTH.
        case worst
        /// Every variant stream whose BANDWIDTH is at most this many bits per second (the lowest one when none is).
        case maxBandwidth(Int)

        /// Parses `all`, `best`, `worst`, or a bandwidth in bits per second (`800000`, `800k`, `2.5M`).
        /// - Returns: `nil` for anything else.
        public init?(parsing text: String) {
            switch text.lowercased() {
            case "all": self = .all
            case "best": self = .best
            case "worst": self = .worst
            default:
                var digits = Substring(text.lowercased())
                var scale = 1.0
                if digits.hasSuffix("k") {
                    scale = 1e3
                    digits = digits.dropLast()
                } else if digits.hasSuffix("m") {
                    scale = 1e6
                    digits = digits.dropLast()
                }
                guard let value = Double(digits), value.isFinite, value > 0, value * scale < Double(Int.max) else {
                    return nil
                }
                self = .maxBandwidth(Int(value * scale))
            }
        }
    }

    /// Which audio renditions (EXT-X-MEDIA TYPE=AUDIO) of the chosen variants' groups to fetch.
    public enum AudioSelection: String, Sendable, Hashable {
        /// Every audio rendition of the groups the chosen variants name.
        case all
        /// Per group, the DEFAULT=YES rendition (or the first one).
        case `default`
    }

    /// Whether to fetch subtitle renditions.
    public enum SubtitleSelection: String, Sendable, Hashable {
        /// Every subtitle rendition of the groups the chosen variants name.
        case all
        /// None; the variants' SUBTITLES attribute is dropped from the written playlist.
        case none
    }

    /// Which variant streams to fetch.
    public var variants: VariantSelection = .all
    /// Which audio renditions to fetch.
    public var audio: AudioSelection = .all
    /// Whether to fetch subtitle renditions.
    public var subtitles: SubtitleSelection = .all
    /// Whether to fetch I-frame playlists (EXT-X-I-FRAME-STREAM-INF) and their segments.
    public var iFrames = false
    /// The manifest view the stream is walked through (`--view`: filters and a window), as the server shows it.
    public var view = ManifestView()
    /// Objects fetched at the same time.
    public var concurrency = 8
    /// Further attempts after a failed fetch (transport errors, 5xx, 408, 429), with doubling delays.
    public var retries = 3
    /// The delay before the first retry.
    public var retryDelay: Duration = .milliseconds(500)
    /// How long to follow a live stream; `nil`: until it ends (EXT-X-ENDLIST) or the command is interrupted.
    public var duration: Duration?
    /// How long a live playlist may keep failing to refresh before it is given up.
    public var liveGiveUp: Duration = .seconds(30)

    /// The defaults: every variant and rendition, no I-frame playlists, 8 at a time, 3 retries.
    public init() {}
}
