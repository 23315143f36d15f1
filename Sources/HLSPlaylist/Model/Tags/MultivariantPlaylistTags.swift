/// `#EXT-X-MEDIA`: a rendition.
public struct MediaTag: Sendable, Hashable {
    /// TYPE: AUDIO, VIDEO, SUBTITLES, CLOSED-CAPTIONS.
    public var type: String
    /// GROUP-ID.
    public var groupID: String
    /// NAME.
    public var name: String
    /// URI of the rendition's media playlist.
    public var uri: String?
    /// LANGUAGE.
    public var language: String?
    /// ASSOC-LANGUAGE.
    public var associatedLanguage: String?
    /// DEFAULT=YES.
    public var isDefault: Bool
    /// AUTOSELECT=YES.
    public var autoselect: Bool
    /// FORCED=YES.
    public var forced: Bool
    /// INSTREAM-ID.
    public var instreamID: String?
    /// CHARACTERISTICS.
    public var characteristics: String?
    /// CHANNELS.
    public var channels: String?
    /// Every attribute as written (STABLE-RENDITION-ID, BIT-DEPTH, SAMPLE-RATE, …).
    public var attributes: AttributeList
}

/// `#EXT-X-STREAM-INF` and `#EXT-X-I-FRAME-STREAM-INF`: a variant stream.
public struct StreamInfTag: Sendable, Hashable {
    /// BANDWIDTH, bits per second.
    public var bandwidth: Int
    /// AVERAGE-BANDWIDTH.
    public var averageBandwidth: Int?
    /// SCORE.
    public var score: Double?
    /// CODECS.
    public var codecs: String?
    /// SUPPLEMENTAL-CODECS.
    public var supplementalCodecs: String?
    /// RESOLUTION.
    public var resolution: Resolution?
    /// FRAME-RATE.
    public var frameRate: Double?
    /// HDCP-LEVEL.
    public var hdcpLevel: String?
    /// VIDEO-RANGE.
    public var videoRange: String?
    /// STABLE-VARIANT-ID.
    public var stableVariantID: String?
    /// AUDIO group.
    public var audio: String?
    /// VIDEO group.
    public var video: String?
    /// SUBTITLES group.
    public var subtitles: String?
    /// CLOSED-CAPTIONS group, or NONE.
    public var closedCaptions: String?
    /// PATHWAY-ID.
    public var pathwayID: String?
    /// URI: the I-frame playlist for EXT-X-I-FRAME-STREAM-INF (EXT-X-STREAM-INF's is the next line).
    public var uri: String?
    /// Every attribute as written.
    public var attributes: AttributeList
}

/// `#EXT-X-SESSION-DATA`.
public struct SessionDataTag: Sendable, Hashable {
    /// DATA-ID.
    public var dataID: String
    /// VALUE.
    public var value: String?
    /// URI of a JSON file.
    public var uri: String?
    /// FORMAT: JSON or RAW.
    public var format: String?
    /// LANGUAGE.
    public var language: String?
    /// Every attribute as written.
    public var attributes: AttributeList
}

/// `#EXT-X-CONTENT-STEERING`.
public struct ContentSteeringTag: Sendable, Hashable {
    /// SERVER-URI of the steering manifest.
    public var serverURI: String
    /// PATHWAY-ID.
    public var pathwayID: String?
    /// Every attribute as written.
    public var attributes: AttributeList
}
