import Foundation

/// A view of a manifest: which variants, renditions and segments of it a player is given, from the `hlscache.*`
/// query parameters of a manifest URL (or `--manifest-filter`, `rewrite --view`, `prefetch --view`).
///
/// Parsed once, checked whole (a malformed value or an unknown `hlscache.*` name is an error naming it), and written
/// back in one spelling (``canonicalQuery``), so that two spellings of one view share one rendering. Views compose
/// (``narrowed(by:)``): a request's view can narrow the server's, never widen it.
///
/// ```swift
/// let view = try ManifestView(query: "hlscache.bandwidth=-3M&hlscache.iframes=none")
/// view.canonicalQuery  // "hlscache.bandwidth=-3000000&hlscache.iframes=none"
/// ```
public struct ManifestView: Sendable, Hashable {
    /// The prefix of every parameter of ours.
    public static let parameterPrefix = "hlscache."

    /// A range of numbers, either end open.
    public struct Bounds: Sendable, Hashable {
        /// The least value kept, if any.
        public var minimum: Int?
        /// The greatest value kept, if any.
        public var maximum: Int?

        /// Bounds; `nil` leaves an end open.
        public init(minimum: Int?, maximum: Int?) {
            self.minimum = minimum
            self.maximum = maximum
        }

        /// Whether `value` lies within.
        public func contains(_ value: Int) -> Bool {
            (minimum.map { value >= $0 } ?? true) && (maximum.map { value <= $0 } ?? true)
        }

        /// Both bounds at once: the greater minimum, the lesser maximum.
        func intersected(with other: Bounds) -> Bounds {
            Bounds(
                minimum: [minimum, other.minimum].compactMap { $0 }.max(),
                maximum: [maximum, other.maximum].compactMap { $0 }.min())
        }

        var text: String { (minimum.map(String.init) ?? "") + "-" + (maximum.map(String.init) ?? "") }
    }

    /// Variants (and I-frame playlists, DASH Representations) by `BANDWIDTH`, bits/s.
    public var bandwidth: Bounds?
    /// Variants by the height of their `RESOLUTION`, pixels (those without one are kept).
    public var height: Bounds?
    /// Lists of codec prefixes: a variant is kept when each of its codecs starts with a prefix of every list.
    public var codecs: [[String]] = []
    /// Lists of language ranges (BCP 47 prefixes): an audio rendition is kept when its language matches every list.
    public var audio: [[String]] = []
    /// Lists of language ranges for subtitle renditions; an empty list (`none`) keeps none.
    public var subtitles: [[String]] = []
    /// Whether I-frame playlists (DASH: trick-mode AdaptationSets) are removed.
    public var removesIFrames = false
    /// A live playlist lists only its last seconds.
    public var windowSeconds: Double?
    /// The live stream as it was this many seconds ago.
    public var delaySeconds: Double?
    /// Start-over: the live stream from this time (Unix seconds).
    public var start: Double?
    /// Start-over's end (Unix seconds).
    public var end: Double?

    /// The view that changes nothing.
    public init() {}

    /// Whether the view changes nothing.
    public var isEmpty: Bool { self == ManifestView() }

    /// Whether the view filters variants or renditions (what a multivariant playlist or an MPD's structure shows).
    public var filtersStreams: Bool {
        bandwidth != nil || height != nil || !codecs.isEmpty || !audio.isEmpty || !subtitles.isEmpty || removesIFrames
    }

    /// Whether the view changes which segments a live playlist lists.
    public var changesTimeline: Bool { windowSeconds != nil || delaySeconds != nil || start != nil || end != nil }

    /// The part of the view a media playlist's rendering depends on (its timeline): what keys the rendering of a
    /// media playlist, so that views that differ only in their filters share it.
    public var timelinePart: ManifestView {
        var part = ManifestView()
        part.windowSeconds = windowSeconds
        part.delaySeconds = delaySeconds
        part.start = start
        part.end = end
        return part
    }

    /// The view with both this one's limits and `other`'s: every filter of both, the shorter window, the longer
    /// delay, the later start and the earlier end.
    public func narrowed(by other: ManifestView) -> ManifestView {
        var view = self
        if let bounds = other.bandwidth { view.bandwidth = bandwidth.map { $0.intersected(with: bounds) } ?? bounds }
        if let bounds = other.height { view.height = height.map { $0.intersected(with: bounds) } ?? bounds }
        view.codecs += other.codecs.filter { !codecs.contains($0) }
        view.audio += other.audio.filter { !audio.contains($0) }
        view.subtitles += other.subtitles.filter { !subtitles.contains($0) }
        view.removesIFrames = removesIFrames || other.removesIFrames
        view.windowSeconds = [windowSeconds, other.windowSeconds].compactMap { $0 }.min()
        view.delaySeconds = [delaySeconds, other.delaySeconds].compactMap { $0 }.max()
        view.start = [start, other.start].compactMap { $0 }.max()
        view.end = [end, other.end].compactMap { $0 }.min()
        return view
    }

    /// Whether a variant with these codecs (its `CODECS` value, comma-separated) is kept; one without is.
    public func keepsCodecs(_ value: String?) -> Bool {
        guard !codecs.isEmpty, let value else { return true }
        let listed = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        return codecs.allSatisfy { prefixes in
            listed.allSatisfy { codec in prefixes.contains { codec.hasPrefix($0) } }
        }
    }

    /// Whether an audio rendition in `language` is kept; one without a language is.
    public func keepsAudio(language: String?) -> Bool { Self.matches(language, audio) }

    /// Whether a subtitle rendition in `language` is kept (`none` keeps none; one without a language is kept by a
    /// list).
    public func keepsSubtitles(language: String?) -> Bool { Self.matches(language, subtitles) }

    /// Whether `language` matches every list of ranges (RFC 4647 basic filtering: `en` matches `en` and `en-GB`).
    private static func matches(_ language: String?, _ lists: [[String]]) -> Bool {
        lists.allSatisfy { ranges in
            guard !ranges.isEmpty else { return false }
            guard let tag = language?.lowercased() else { return true }
            return ranges.contains { tag == $0 || tag.hasPrefix($0 + "-") }
        }
    }
}
