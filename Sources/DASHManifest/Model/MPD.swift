/// What a cache needs to know of an MPEG-DASH Media Presentation Description (ISO/IEC 23009-1): whether it changes,
/// how often to reload it, and where every segment of every Representation is.
public struct MPD: Sendable, Hashable {
    /// `static` (on demand) or `dynamic` (live).
    public enum PresentationType: String, Sendable, Hashable {
        /// A presentation that does not change (`type="static"`, the default).
        case `static`
        /// A live presentation, reloaded every `minimumUpdatePeriod`.
        case dynamic
    }

    /// `@type`.
    public var type: PresentationType
    /// `@minimumUpdatePeriod`, seconds.
    public var minimumUpdatePeriod: Double?
    /// `@mediaPresentationDuration`, seconds.
    public var mediaPresentationDuration: Double?
    /// The MPD-level `BaseURL`s, as written.
    public var baseURLs: [String]
    /// `Location`: where the MPD is to be reloaded from.
    public var locations: [String]
    /// The periods, in order.
    public var periods: [Period]
}

/// A `Period`.
public struct Period: Sendable, Hashable {
    /// `@id`.
    public var id: String?
    /// `@start`, seconds.
    public var start: Double?
    /// `@duration`, seconds.
    public var duration: Double?
    /// `BaseURL`s, as written.
    public var baseURLs: [String]
    /// The period's `SegmentTemplate`, inherited below.
    public var segmentTemplate: SegmentTemplate?
    /// Its adaptation sets.
    public var adaptationSets: [AdaptationSet]
}

/// An `AdaptationSet`.
public struct AdaptationSet: Sendable, Hashable {
    /// `@id`.
    public var id: String?
    /// `@mimeType` or `@contentType`.
    public var mimeType: String?
    /// `BaseURL`s, as written.
    public var baseURLs: [String]
    /// Its `SegmentTemplate`, inherited by its Representations.
    public var segmentTemplate: SegmentTemplate?
    /// Its Representations.
    public var representations: [Representation]
}

/// A `Representation`: one encoding of the content, with how its segments are addressed.
public struct Representation: Sendable, Hashable {
    /// `@id` (`$RepresentationID$`).
    public var id: String
    /// `@bandwidth`, bits per second (`$Bandwidth$`).
    public var bandwidth: Int
    /// `BaseURL`s, as written.
    public var baseURLs: [String]
    /// How its segments are addressed.
    public var addressing: SegmentAddressing?
}

/// How a Representation's segments are addressed: the three schemes of ISO/IEC 23009-1 section 5.3.9.
public enum SegmentAddressing: Sendable, Hashable {
    /// `SegmentTemplate`, after inheritance from the Period and the AdaptationSet.
    case template(SegmentTemplate)
    /// `SegmentList`.
    case list(SegmentList)
    /// `SegmentBase`: one media file, indexed by its `sidx` (`@indexRange`).
    case base(SegmentBase)
}

/// `SegmentTemplate`.
public struct SegmentTemplate: Sendable, Hashable {
    /// `@media`, with its identifiers (`$Number$`, `$Time$`…).
    public var media: String?
    /// `@initialization`.
    public var initialization: String?
    /// `@index`.
    public var index: String?
    /// `@bitstreamSwitching`.
    public var bitstreamSwitching: String?
    /// `@startNumber` (default 1).
    public var startNumber: Int?
    /// `@presentationTimeOffset`, in timescale units (default 0).
    public var presentationTimeOffset: Int?
    /// `@timescale` (default 1).
    public var timescale: Int?
    /// `@duration`, in timescale units.
    public var duration: Int?
    /// `SegmentTimeline`'s `S` elements, when it has one.
    public var timeline: [TimelineEntry]?
    /// The line of the `SegmentTemplate` element, for messages.
    public var line: Int?

    /// This template completed with what `parent` says and this one does not.
    public func inheriting(from parent: SegmentTemplate?) -> SegmentTemplate {
        guard let parent else { return self }
        return SegmentTemplate(
            media: media ?? parent.media, initialization: initialization ?? parent.initialization,
            index: index ?? parent.index, bitstreamSwitching: bitstreamSwitching ?? parent.bitstreamSwitching,
            startNumber: startNumber ?? parent.startNumber,
            presentationTimeOffset: presentationTimeOffset ?? parent.presentationTimeOffset,
            timescale: timescale ?? parent.timescale,
            duration: duration ?? parent.duration, timeline: timeline ?? parent.timeline, line: line ?? parent.line)
    }
}

/// One `S` of a `SegmentTimeline`: `r + 1` segments of `d` units from `t`.
public struct TimelineEntry: Sendable, Hashable {
    /// `@t`: the start, when given.
    public var time: Int?
    /// `@d`: the duration.
    public var duration: Int
    /// `@r`: repeats after the first (-1: until the next `S` or the end of the Period).
    public var repeatCount: Int
}

/// `SegmentList`.
public struct SegmentList: Sendable, Hashable {
    /// `@startNumber`, for the segments' numbers (default 1).
    public var startNumber: Int?
    /// `Initialization@sourceURL` and `@range`.
    public var initialization: URLWithRange?
    /// `SegmentURL`s, in order.
    public var segments: [SegmentURL]
}

/// `SegmentURL`.
public struct SegmentURL: Sendable, Hashable {
    /// `@media` (the Representation's BaseURL when absent).
    public var media: String?
    /// `@mediaRange`.
    public var mediaRange: String?
}

/// `SegmentBase`.
public struct SegmentBase: Sendable, Hashable {
    /// `Initialization`.
    public var initialization: URLWithRange?
    /// `@indexRange`.
    public var indexRange: String?
}

/// A URL with an optional byte range (`Initialization`, `RepresentationIndex`).
public struct URLWithRange: Sendable, Hashable {
    /// `@sourceURL` (the BaseURL when absent).
    public var sourceURL: String?
    /// `@range`, `first-last`.
    public var range: String?
}
