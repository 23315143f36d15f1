import ManifestURLs

/// Why an MPD cannot be used: a message a person can act on, with the line when there is one.
public struct MPDError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of an ``MPDError``, comparable with `==`.
    public enum Kind: String, Sendable, Hashable {
        /// Not well-formed XML.
        case notWellFormed = "not_well_formed"
        /// Well-formed, but the root element is not a DASH `MPD`.
        case notAnMPD = "not_an_mpd"
        /// A document type declaration: MPDs have none, and one could declare entities (XXE, billion laughs).
        case documentType = "document_type"
        /// A required attribute is missing or a value is not valid.
        case invalidValue = "invalid_value"
        /// Larger than the size limit, or more elements, attributes or output than the limits allow.
        case tooLarge = "too_large"
        /// A `SegmentTemplate` whose segments cannot be counted (no period length, no `SegmentTimeline`): a live
        /// MPD's `$Number$` template, which players count by the clock.
        case uncountable
        /// A manifest view that cannot be shown (``view``).
        case view
    }

    /// What went wrong.
    public let kind: Kind
    /// The line it went wrong on, if known (1-based).
    public let line: Int?
    /// The reason, without the line.
    public let reason: String
    /// The view's own error, for ``Kind/view``.
    public private(set) var view: ManifestViewError?

    /// Creates an error.
    /// - Parameters:
    ///   - kind: the kind.
    ///   - reason: the reason.
    ///   - line: the line, if known.
    public init(_ kind: Kind, _ reason: String, line: Int? = nil) {
        self.kind = kind
        self.reason = reason
        self.line = line.flatMap { $0 > 0 ? $0 : nil }
    }

    /// The error of a view that cannot be shown.
    public init(view: ManifestViewError) {
        self.init(.view, view.message)
        self.view = view
    }

    /// `<reason> (line N)`.
    public var description: String {
        guard let line else { return reason }
        return "\(reason) (line \(line))"
    }
}
