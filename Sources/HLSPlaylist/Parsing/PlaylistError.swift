/// An error raised while parsing or rewriting a playlist, with the line it concerns.
///
/// Cases are static members so that new ones can be added without breaking users.
/// ``label`` is short and has no associated values, so it is safe as a metric label;
/// ``description`` is the one-line message a person can act on.
public struct PlaylistError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: String, Sendable, Hashable {
        case missingHeader = "missing_header"
        case notUTF8 = "not_utf8"
        case lineTooLong = "line_too_long"
        case bodyTooLarge = "body_too_large"
        case malformedAttributeList = "malformed_attribute_list"
        case undefinedVariable = "undefined_variable"
        case invalidBaseURL = "invalid_base_url"
        case numberOutOfRange = "number_out_of_range"
        case outputTooLarge = "output_too_large"
        case uriTooLong = "uri_too_long"
        case tooManyLines = "too_many_lines"
    }

    private let code: Code
    /// The 1-based line number the error concerns, or 0 when it concerns the whole input.
    public let line: Int
    /// What is wrong, for a person to read (without the line number).
    public let reason: String

    private init(_ code: Code, line: Int, reason: String) {
        self.code = code
        self.line = line
        self.reason = reason
    }

    /// A short, stable name of the kind of error, safe as a metric label.
    public var label: String { code.rawValue }

    /// The reason followed by the line number: `missing #EXTM3U header (line 1)`.
    public var description: String { line > 0 ? "\(reason) (line \(line))" : reason }

    /// The input does not start with `#EXTM3U` (after an optional BOM and blank space).
    public static func missingHeader(line: Int) -> PlaylistError {
        PlaylistError(.missingHeader, line: line, reason: "missing #EXTM3U header: this is not an HLS playlist")
    }

    /// The input is not valid UTF-8.
    public static func notUTF8(line: Int) -> PlaylistError {
        PlaylistError(.notUTF8, line: line, reason: "playlist is not valid UTF-8")
    }

    /// A line is longer than ``ParseLimits/maxLineBytes``.
    public static func lineTooLong(line: Int, limit: Int) -> PlaylistError {
        PlaylistError(.lineTooLong, line: line, reason: "line longer than the limit of \(limit) bytes")
    }

    /// The whole input is larger than ``ParseLimits/maxBodyBytes``.
    public static func bodyTooLarge(bytes: Int, limit: Int) -> PlaylistError {
        PlaylistError(.bodyTooLarge, line: 0, reason: "playlist of \(bytes) bytes exceeds the limit of \(limit) bytes")
    }

    /// The input has more lines than ``ParseLimits/maxLines``.
    public static func tooManyLines(limit: Int) -> PlaylistError {
        PlaylistError(.tooManyLines, line: 0, reason: "playlist has more than the limit of \(limit) lines")
    }

    /// A tag that carries a URI has an attribute list that cannot be parsed.
    public static func malformedAttributeList(line: Int, tag: String, detail: String) -> PlaylistError {
        PlaylistError(.malformedAttributeList, line: line, reason: "malformed attribute list in \(tag): \(detail)")
    }

    /// A URI refers to a variable that no EXT-X-DEFINE declares.
    public static func undefinedVariable(line: Int, name: String) -> PlaylistError {
        PlaylistError(.undefinedVariable, line: line, reason: "variable {$\(name)} is not defined by any EXT-X-DEFINE")
    }

    /// The URL the playlist was fetched from is not an absolute URL.
    public static func invalidBaseURL(_ url: String) -> PlaylistError {
        PlaylistError(.invalidBaseURL, line: 0, reason: "playlist URL is not an absolute URL: \(url)")
    }

    /// A tag's number is out of the range hlscache can compute with (a sequence number or byte offset that would
    /// overflow, a duration that is not finite or longer than 2³² − 1 seconds).
    public static func numberOutOfRange(line: Int, tag: String, value: String) -> PlaylistError {
        PlaylistError(.numberOutOfRange, line: line, reason: "number out of range in \(tag): \(value.prefix(64))")
    }

    /// The rewritten playlist would be larger than `RewriteLimits` allow (an EXT-X-DEFINE expansion bomb).
    public static func outputTooLarge(line: Int, limit: Int) -> PlaylistError {
        PlaylistError(
            .outputTooLarge, line: line,
            reason: "rewritten playlist would exceed \(limit) bytes (EXT-X-DEFINE expansion or URIs too long)")
    }

    /// A URI is longer than `RewriteLimits.maxURIBytes` once its variables are substituted.
    public static func uriTooLong(line: Int, limit: Int) -> PlaylistError {
        PlaylistError(.uriTooLong, line: line, reason: "URI longer than \(limit) bytes after variable substitution")
    }

    /// Whether two errors are of the same kind, whatever their line and reason.
    public func isSameKind(as other: PlaylistError) -> Bool { code == other.code }
}

/// Size limits applied while parsing, so a hostile origin cannot exhaust memory.
public struct ParseLimits: Sendable, Hashable {
    /// The longest line accepted, in bytes (default 1 MiB).
    public var maxLineBytes: Int
    /// The largest playlist accepted, in bytes (default 16 MiB).
    public var maxBodyBytes: Int
    /// The most lines accepted, blank ones included (default 2,000,000). The parser keeps about 36 bytes per line, so
    /// this bounds its index whatever the bytes are: 16 MiB of bare line feeds would otherwise take over half a
    /// gigabyte. A real playlist of 16 MiB has under a million lines.
    public var maxLines: Int

    /// Creates limits.
    /// - Parameters:
    ///   - maxLineBytes: the longest line accepted, in bytes.
    ///   - maxBodyBytes: the largest playlist accepted, in bytes.
    ///   Both are capped at 1 GiB: the parser's index stores offsets as 32-bit numbers.
    ///   - maxLines: the most lines accepted.
    public init(maxLineBytes: Int = 1 << 20, maxBodyBytes: Int = 16 << 20, maxLines: Int = 2_000_000) {
        self.maxLineBytes = min(max(0, maxLineBytes), 1 << 30)
        self.maxBodyBytes = min(max(0, maxBodyBytes), 1 << 30)
        self.maxLines = min(max(0, maxLines), 1 << 30)
    }

    /// 1 MiB lines, 16 MiB playlists, 2,000,000 lines.
    public static let `default` = ParseLimits()
}
