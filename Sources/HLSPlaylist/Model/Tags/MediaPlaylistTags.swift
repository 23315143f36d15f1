/// `#EXT-X-START`.
public struct StartTag: Sendable, Hashable {
    /// TIME-OFFSET, seconds (negative: from the end).
    public var timeOffset: Double
    /// PRECISE=YES.
    public var precise: Bool
    /// Every attribute as written.
    public var attributes: AttributeList
}

/// `#EXT-X-PART-INF`.
public struct PartInfTag: Sendable, Hashable {
    /// PART-TARGET, seconds.
    public var partTarget: Double
    /// Every attribute as written.
    public var attributes: AttributeList
}

/// `#EXT-X-SERVER-CONTROL`.
public struct ServerControlTag: Sendable, Hashable {
    /// CAN-SKIP-UNTIL, seconds.
    public var canSkipUntil: Double?
    /// CAN-SKIP-DATERANGES=YES.
    public var canSkipDateRanges: Bool
    /// HOLD-BACK, seconds.
    public var holdBack: Double?
    /// PART-HOLD-BACK, seconds.
    public var partHoldBack: Double?
    /// CAN-BLOCK-RELOAD=YES.
    public var canBlockReload: Bool
    /// Every attribute as written.
    public var attributes: AttributeList
}

/// `#EXT-X-KEY` and `#EXT-X-SESSION-KEY`.
public struct KeyTag: Sendable, Hashable {
    /// METHOD: NONE, AES-128, SAMPLE-AES, SAMPLE-AES-CTR, …
    public var method: String
    /// URI of the key.
    public var uri: String?
    /// IV, as bytes.
    public var iv: [UInt8]?
    /// KEYFORMAT.
    public var keyFormat: String?
    /// KEYFORMATVERSIONS.
    public var keyFormatVersions: String?
    /// Every attribute as written.
    public var attributes: AttributeList
}

/// `#EXT-X-MAP`.
public struct MapTag: Sendable, Hashable {
    /// URI of the media initialization section.
    public var uri: String
    /// BYTERANGE.
    public var byteRange: PlaylistByteRange?
    /// Every attribute as written.
    public var attributes: AttributeList
}

/// `#EXT-X-DATERANGE`, including HLS interstitials (CLASS="com.apple.hls.interstitial").
public struct DateRangeTag: Sendable, Hashable {
    /// ID.
    public var id: String
    /// CLASS.
    public var classID: String?
    /// START-DATE, as written.
    public var startDate: String?
    /// END-DATE, as written.
    public var endDate: String?
    /// DURATION, seconds.
    public var duration: Double?
    /// PLANNED-DURATION, seconds.
    public var plannedDuration: Double?
    /// END-ON-NEXT=YES.
    public var endOnNext: Bool
    /// X-ASSET-URI of an interstitial.
    public var assetURI: String?
    /// X-ASSET-LIST of an interstitial.
    public var assetList: String?
    /// Every attribute as written (SCTE35-*, X-* client attributes, …).
    public var attributes: AttributeList
}

/// `#EXT-X-PART`.
public struct PartTag: Sendable, Hashable {
    /// URI of the partial segment.
    public var uri: String
    /// DURATION, seconds.
    public var duration: Double
    /// INDEPENDENT=YES.
    public var independent: Bool
    /// BYTERANGE.
    public var byteRange: PlaylistByteRange?
    /// GAP=YES.
    public var gap: Bool
    /// Every attribute as written.
    public var attributes: AttributeList
}

/// `#EXT-X-PRELOAD-HINT`.
public struct PreloadHintTag: Sendable, Hashable {
    /// TYPE: PART or MAP.
    public var type: String
    /// URI of the hinted resource.
    public var uri: String
    /// BYTERANGE-START.
    public var byteRangeStart: Int?
    /// BYTERANGE-LENGTH.
    public var byteRangeLength: Int?
    /// Every attribute as written.
    public var attributes: AttributeList
}

/// `#EXT-X-RENDITION-REPORT`.
public struct RenditionReportTag: Sendable, Hashable {
    /// URI of the other rendition's media playlist.
    public var uri: String?
    /// LAST-MSN.
    public var lastMediaSequence: Int?
    /// LAST-PART.
    public var lastPart: Int?
    /// Every attribute as written.
    public var attributes: AttributeList
}

/// `#EXT-X-SKIP` of a delta playlist.
public struct SkipTag: Sendable, Hashable {
    /// SKIPPED-SEGMENTS.
    public var skippedSegments: Int
    /// RECENTLY-REMOVED-DATERANGES, tab-separated IDs.
    public var recentlyRemovedDateRanges: [String]
    /// Every attribute as written.
    public var attributes: AttributeList
}
