/// Why the `hlscache.*` parameters of a manifest URL (or a `--manifest-filter`, a `--view`) do not make a view.
public struct ManifestViewError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Sendable, Hashable {
        case unknown, repeated, malformed, leavesNothing, beforeHistory, unrenderable, unsupported
    }

    private let code: Code
    /// What a person can act on: the parameter, and what is wrong with it.
    public let message: String

    /// A view that leaves nothing to play (every variant filtered out).
    public static func leavesNothing(_ reason: String) -> ManifestViewError {
        ManifestViewError(code: .leavesNothing, message: "the view leaves nothing to play: \(reason)")
    }

    /// A view asking for what the live history does not hold (a start before it, a delay beyond it).
    public static func beforeHistory(_ reason: String) -> ManifestViewError {
        ManifestViewError(code: .beforeHistory, message: reason)
    }

    /// A view this kind of manifest cannot be shown through (a delay or a start on an MPD).
    public static func unsupported(_ reason: String) -> ManifestViewError {
        ManifestViewError(code: .unsupported, message: reason)
    }

    /// A view whose manifest cannot be written (the origin's manifest is at fault).
    public static func unrenderable(_ reason: String) -> ManifestViewError {
        ManifestViewError(code: .unrenderable, message: reason)
    }

    /// Whether the request's parameters are at fault (400), rather than what they ask of this manifest (422), or the
    /// manifest itself.
    public var isMalformedRequest: Bool { code == .unknown || code == .repeated || code == .malformed }

    /// Whether the view asks for what this manifest cannot give (422: no variant left, a time the history does not
    /// hold).
    public var isUnprocessable: Bool { code == .leavesNothing || code == .beforeHistory || code == .unsupported }

    /// A name of our namespace that no view knows (a typo is not ignored).
    static func unknown(_ parameter: String) -> ManifestViewError {
        ManifestViewError(
            code: .unknown,
            message: "unknown view parameter \(parameter): use hlscache."
                + ManifestView.parameterNames.joined(separator: ", hlscache."))
    }

    /// A parameter given twice.
    static func repeated(_ name: String) -> ManifestViewError {
        ManifestViewError(code: .repeated, message: "hlscache.\(name) is given twice")
    }

    /// A value that does not read.
    static func malformed(_ name: String, _ reason: String) -> ManifestViewError {
        ManifestViewError(code: .malformed, message: "malformed hlscache.\(name): \(reason)")
    }

    /// A short name of the problem, safe as a metric label.
    public var description: String {
        switch code {
        case .unknown: "unknown view parameter"
        case .repeated: "repeated view parameter"
        case .malformed: "malformed view parameter"
        case .leavesNothing: "view leaves nothing"
        case .beforeHistory: "view before the live history"
        case .unrenderable: "view not renderable"
        case .unsupported: "view not supported"
        }
    }
}
