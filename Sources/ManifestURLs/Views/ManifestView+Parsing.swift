import Foundation

extension ManifestView {
    /// The names of the parameters, in the order ``canonicalQuery`` writes them.
    public static let parameterNames = [
        "audio", "bandwidth", "codecs", "delay", "end", "height", "iframes", "start", "subtitles", "window",
    ]

    /// The most entries of a list (codecs, languages).
    static let maxListEntries = 32
    /// The greatest bandwidth a bound may name, bits/s (a terabit).
    static let maxBandwidth = 1_000_000_000_000
    /// The greatest height a bound may name, pixels.
    static let maxHeight = 1_000_000
    /// The longest window or delay, seconds (a week).
    static let maxSeconds = 7 * 86_400.0

    /// Parses the `hlscache.*` parameters of a query (`name=value` joined with `&`; percent-encoded values are
    /// decoded; parameters of other names are ignored).
    /// - Throws: ``ManifestViewError`` for an unknown `hlscache.*` name, a name given twice, or a malformed value.
    public init(query: some StringProtocol) throws(ManifestViewError) {
        self.init()
        var seen: Set<String> = []
        for parameter in query.split(separator: "&", omittingEmptySubsequences: true) {
            guard parameter.hasPrefix(Self.parameterPrefix) else { continue }
            let equals = parameter.firstIndex(of: "=")
            let name = String(
                parameter[
                    parameter.index(
                        parameter.startIndex, offsetBy: Self.parameterPrefix.count)..<(equals ?? parameter.endIndex)])
            guard Self.parameterNames.contains(name) else {
                throw .unknown(String(parameter.prefix(64)))
            }
            guard seen.insert(name).inserted else { throw .repeated(name) }
            guard let equals, let value = String(parameter[parameter.index(after: equals)...]).removingPercentEncoding,
                !value.isEmpty
            else { throw .malformed(name, "no value") }
            try take(name, value)
        }
    }

    /// Parses a view given on its own (`--manifest-filter`, `--view`): every parameter must be one of ours.
    /// - Throws: ``ManifestViewError`` as ``init(query:)``, and for a parameter outside the namespace.
    public init(parameters: some StringProtocol) throws(ManifestViewError) {
        for parameter in parameters.split(separator: "&") where !parameter.hasPrefix(Self.parameterPrefix) {
            throw .unknown(String(parameter.prefix(64)))
        }
        try self.init(query: parameters)
    }

    /// Reads one parameter's value.
    private mutating func take(_ name: String, _ value: String) throws(ManifestViewError) {
        switch name {
        case "bandwidth": bandwidth = try Self.bounds(name, value, limit: Self.maxBandwidth, suffixes: true)
        case "height": height = try Self.bounds(name, value, limit: Self.maxHeight, suffixes: false)
        case "codecs": codecs = [try Self.list(name, value, allowsNone: false)]
        case "audio": audio = [try Self.list(name, value, allowsNone: false)]
        case "subtitles": subtitles = [try Self.list(name, value, allowsNone: true)]
        case "iframes":
            guard value.lowercased() == "none" else { throw .malformed(name, "only none is known") }
            removesIFrames = true
        case "window":
            let seconds = try Self.seconds(name, value)
            guard seconds > 0 else { throw .malformed(name, "a window of less than a second lists nothing") }
            windowSeconds = seconds
        case "delay": delaySeconds = try Self.seconds(name, value)
        case "start": start = try Self.time(name, value)
        default:
            end = try Self.time(name, value)
            if let start, let end, end <= start { throw .malformed(name, "the end is not after the start") }
        }
        if name == "start", let start, let end, end <= start {
            throw .malformed("end", "the end is not after the start")
        }
    }

    /// `MIN-MAX`, either side empty, with `k` and `M` suffixes where `suffixes`.
    private static func bounds(
        _ name: String, _ value: String, limit: Int, suffixes: Bool
    ) throws(ManifestViewError) -> Bounds {
        let sides = value.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard sides.count == 2, !(sides[0].isEmpty && sides[1].isEmpty) else {
            throw .malformed(name, "use MIN-MAX (either side may be empty)")
        }
        func number(_ text: Substring) throws(ManifestViewError) -> Int? {
            if text.isEmpty { return nil }
            var digits = text
            var scale = 1.0
            if suffixes, let last = text.last, last == "k" || last == "M" {
                scale = last == "k" ? 1e3 : 1e6
                digits = text.dropLast()
            }
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                digits.first != ".", let read = Double(digits), read * scale <= Double(limit)
            else { throw .malformed(name, "\(text.prefix(32)) is not a number from 0 to \(limit)") }
            return Int(read * scale)
        }
        let bounds = Bounds(minimum: try number(sides[0]), maximum: try number(sides[1]))
        if let minimum = bounds.minimum, let maximum = bounds.maximum, minimum > maximum {
            throw .malformed(name, "the minimum is above the maximum")
        }
        return bounds
    }

    /// A comma-separated list of prefixes (letters, digits, `.`, `-`), lowercased; `none` is the empty list where
    /// `allowsNone`.
    private static func list(_ name: String, _ value: String, allowsNone: Bool) throws(ManifestViewError) -> [String] {
        if allowsNone, value.lowercased() == "none" { return [] }
        // `none` is not a language: `none,en` is a mistake, not a language called none.
        let entries = value.split(separator: ",", omittingEmptySubsequences: false).map { $0.lowercased() }
        guard entries.count <= maxListEntries else { throw .malformed(name, "more than \(maxListEntries) entries") }
        guard !entries.contains("none") else { throw .malformed(name, "none stands alone, not in a list") }
        for entry in entries {
            guard !entry.isEmpty, entry.count <= 64,
                entry.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") })
            else { throw .malformed(name, "\(entry.prefix(32)) is not a prefix (letters, digits, . and -)") }
        }
        return Array(Set(entries)).sorted()
    }

    /// Seconds, from 0 to ``maxSeconds``.
    private static func seconds(_ name: String, _ value: String) throws(ManifestViewError) -> Double {
        guard value.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), value.first != ".",
            let seconds = Double(value), seconds.isFinite, seconds <= maxSeconds
        else { throw .malformed(name, "\(value.prefix(32)) is not a number of seconds from 0 to \(Int(maxSeconds))") }
        return wholeSeconds(seconds)
    }

    /// A time: Unix seconds, or RFC 3339 (`2026-11-28T18:00:00Z`, fractions and offsets allowed).
    private static func time(_ name: String, _ value: String) throws(ManifestViewError) -> Double {
        if value.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }), value.first != ".",
            let seconds = Double(value), seconds.isFinite, seconds <= 1e11
        {
            return wholeSeconds(seconds)
        }
        if value.count <= 40, let date = RFC3339.date(value), (0...1e11).contains(date.timeIntervalSince1970) {
            return wholeSeconds(date.timeIntervalSince1970)
        }
        throw .malformed(name, "\(value.prefix(40)) is neither Unix seconds nor an RFC 3339 time from 1970 on")
    }

    /// `seconds` to the whole second: what ``canonicalQuery`` writes reads back the same, and views a second apart
    /// share one rendering (a flood of views a fraction apart is not a flood of renderings).
    private static func wholeSeconds(_ seconds: Double) -> Double { seconds.rounded() }

    /// The view's parameters in one spelling: names in ``parameterNames`` order, numbers plain, lists sorted and
    /// lowercased; empty for the empty view. What keys a rendering, and what rewritten URIs carry.
    public var canonicalQuery: String {
        var parameters: [String] = []
        func add(_ name: String, _ value: String) { parameters.append(Self.parameterPrefix + name + "=" + value) }
        func lists(_ lists: [[String]]) -> String {
            lists.map { $0.isEmpty ? "none" : $0.joined(separator: ",") }.joined(separator: "+")
        }
        if !audio.isEmpty { add("audio", lists(audio)) }
        if let bandwidth { add("bandwidth", bandwidth.text) }
        if !codecs.isEmpty { add("codecs", lists(codecs)) }
        if let delaySeconds { add("delay", Self.number(delaySeconds)) }
        if let end { add("end", Self.number(end)) }
        if let height { add("height", height.text) }
        if removesIFrames { add("iframes", "none") }
        if let start { add("start", Self.number(start)) }
        if !subtitles.isEmpty { add("subtitles", lists(subtitles)) }
        if let windowSeconds { add("window", Self.number(windowSeconds)) }
        return parameters.joined(separator: "&")
    }

    /// `uri` with the view's ``canonicalQuery`` added to its own query: how a multivariant playlist's URIs carry the
    /// view to its media playlists.
    public func carried(by uri: String) -> String {
        let query = canonicalQuery
        guard !query.isEmpty else { return uri }
        let fragment = uri.firstIndex(of: "#") ?? uri.endIndex
        let separator = uri[..<fragment].contains("?") ? "&" : "?"
        return uri[..<fragment] + separator + query + uri[fragment...]
    }

    /// A whole number of seconds (never an exponent).
    private static func number(_ value: Double) -> String {
        abs(value) < 1e15 ? String(Int(value.rounded())) : "0"
    }
}

/// RFC 3339 times, read with the formats it allows (with and without a fraction of a second): view times, and the
/// playlists' `EXT-X-PROGRAM-DATE-TIME`.
package enum RFC3339 {
    /// The time `text` names, if it is one.
    package static func date(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }
}
