import ManifestURLs

/// One object a player of a static MPD fetches: an initialization segment, a media segment, an index, or a byte
/// range of a file.
public struct MPDObject: Sendable, Hashable {
    /// What the object is.
    public enum Role: String, Sendable, Hashable {
        /// An initialization segment (or a file's initialization range).
        case initialization
        /// A media segment.
        case media
        /// A segment index (`sidx`).
        case index
    }

    /// The absolute URL.
    public var url: String
    /// The bytes of `url` meant, `first-last` inclusive; `nil` for the whole resource.
    public var range: ClosedRange<Int64>?
    /// What it is.
    public var role: Role
}

extension MPD {
    /// The most segments one Representation may have; more is an MPD no prefetch should follow.
    public static let maxSegmentsPerRepresentation = 100_000

    /// Every object the Representations `keeping` accepts need, period after period, with URLs resolved along the
    /// `BaseURL` chain (the first `BaseURL` of each level) from `documentURL`.
    /// - Parameters:
    ///   - documentURL: the MPD's URL (after redirects).
    ///   - limits: how many segments, and how many bytes of URLs, may be listed.
    ///   - keeping: which Representations to include.
    /// - Returns: the objects in order: per Representation, its initialization, then its segments.
    /// - Throws: ``MPDError`` when a template's segments cannot be counted (no duration to divide), or number more
    ///   than the limits allow: counted before any is listed.
    public func objects(
        documentURL: String, limits: ExpansionLimits = .default, keeping: (Representation) -> Bool = { _ in true }
    ) throws(MPDError) -> [MPDObject] {
        try objectsByRepresentation(documentURL: documentURL, limits: limits, keeping: keeping).flatMap(\.objects)
    }

    /// ``objects(documentURL:limits:keeping:)`` Representation by Representation (period after period), each with its
    /// period's id and its own: the sequence a player of that Representation fetches.
    ///
    /// Every Representation's segments are counted first, by arithmetic alone, and their URLs' bytes bounded from
    /// their templates: past ``ExpansionLimits`` nothing is listed, so the work is bounded by the limits, not by
    /// the numbers an origin wrote.
    public func objectsByRepresentation(
        documentURL: String, limits: ExpansionLimits = .default, keeping: (Representation) -> Bool = { _ in true }
    ) throws(MPDError) -> [(id: String, objects: [MPDObject])] {
        var plans: [(id: String, representation: Representation, base: String, runs: [SegmentRun])] = []
        var segments = 0
        var urlBytes = 0
        let mpdBase = Self.base(baseURLs, documentURL)
        for (index, period) in periods.enumerated() {
            let periodBase = Self.base(period.baseURLs, mpdBase)
            let periodSeconds = period.duration ?? periodEnd(after: index).map { $0 - (period.start ?? 0) }
            for set in period.adaptationSets {
                let setBase = Self.base(set.baseURLs, periodBase)
                for representation in set.representations where keeping(representation) {
                    let base = Self.base(representation.baseURLs, setBase)
                    var runs: [SegmentRun] = []
                    let count: Int
                    var longestURL = base.utf8.count + 64
                    switch representation.addressing {
                    case .template(let template)?:
                        if template.media != nil {
                            runs = try template.segmentRuns(
                                periodSeconds: periodSeconds, limit: limits.maxSegmentsPerRepresentation)
                        }
                        count = runs.reduce(0) { $0 + $1.count }
                        let longest =
                            [template.media, template.initialization].compactMap { $0 }.map {
                                SegmentTemplate.expandedBound($0, representation: representation)
                            }.max() ?? 0
                        longestURL = longestURL.addingReportingOverflow(longest).partialValue
                    case .list(let list)?: count = list.segments.count
                    default: count = 1
                    }
                    segments += count
                    guard count <= limits.maxSegmentsPerRepresentation, segments <= limits.maxSegments else {
                        throw MPDError(
                            .invalidValue,
                            "more than \(min(limits.maxSegments, limits.maxSegmentsPerRepresentation)) segments to list"
                                + " (Representation \(representation.id))")
                    }
                    let bytes = (count + 1).multipliedReportingOverflow(by: longestURL)
                    urlBytes = urlBytes.addingReportingOverflow(bytes.partialValue).partialValue
                    guard !bytes.overflow, urlBytes >= 0, urlBytes <= limits.maxURLBytes else {
                        throw MPDError(
                            .invalidValue,
                            "the segment URLs would take more than \(limits.maxURLBytes) bytes"
                                + " (Representation \(representation.id))")
                    }
                    plans.append(("\(period.id ?? String(index))/\(representation.id)", representation, base, runs))
                }
            }
        }
        return plans.map { plan in
            (plan.id, Self.objects(of: plan.representation, base: plan.base, runs: plan.runs))
        }
    }

    /// When the period after `index` starts, or the presentation ends.
    private func periodEnd(after index: Int) -> Double? {
        if index + 1 < periods.count, let next = periods[index + 1].start { return next }
        return mediaPresentationDuration
    }

    private static func base(_ baseURLs: [String], _ parent: String) -> String {
        baseURLs.first.flatMap { URLResolution.resolve($0, against: parent) } ?? parent
    }

    /// The objects of one Representation, its template's segments already counted and checked (`runs`).
    private static func objects(of representation: Representation, base: String, runs: [SegmentRun]) -> [MPDObject] {
        func object(_ reference: String?, range: String?, role: MPDObject.Role) -> MPDObject? {
            guard let url = URLResolution.resolve(reference ?? "", against: base) else { return nil }
            return MPDObject(url: url, range: range.flatMap(Self.range), role: role)
        }
        switch representation.addressing {
        case .template(let template)?:
            let fill = { (pattern: String, number: Int, time: Int) in
                SegmentTemplate.expand(pattern, representation: representation, number: number, time: time)
            }
            var result: [MPDObject] = []
            if let initialization = template.initialization {
                result += [object(fill(initialization, 0, 0), range: nil, role: .initialization)].compactMap { $0 }
            }
            guard let media = template.media else { return result }
            // The runs were checked: every number and time below fits (``SegmentTemplate/segmentRuns``).
            for run in runs {
                for offset in 0..<run.count {
                    let number = run.firstNumber + offset
                    let time = run.time + offset * run.duration
                    if let segment = object(fill(media, number, time), range: nil, role: .media) {
                        result.append(segment)
                    }
                }
            }
            return result
        case .list(let list)?:
            var result: [MPDObject?] = []
            if let initialization = list.initialization {
                result.append(object(initialization.sourceURL, range: initialization.range, role: .initialization))
            }
            for segment in list.segments {
                result.append(object(segment.media, range: segment.mediaRange, role: .media))
            }
            return result.compactMap { $0 }
        case .base(let segmentBase)?:
            var result: [MPDObject?] = []
            if let initialization = segmentBase.initialization {
                result.append(object(initialization.sourceURL, range: initialization.range, role: .initialization))
            }
            if let indexRange = segmentBase.indexRange {
                result.append(object(nil, range: indexRange, role: .index))
            }
            result.append(object(nil, range: nil, role: .media))
            return result.compactMap { $0 }
        case nil:
            return [object(nil, range: nil, role: .media)].compactMap { $0 }
        }
    }

    /// `first-last` as a closed range, checked: its length (`last - first + 1`) fits in `Int64`.
    static func range(_ text: String) -> ClosedRange<Int64>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]), first >= 0, first <= last,
            last < .max
        else { return nil }
        return first...last
    }

    /// Checks every template's numbers as a player would use them: the segment numbers and times it would compute,
    /// and the counts, fit in 64 bits. Templates that cannot be counted (a live `$Number$` template with no period
    /// length) are not an error here.
    /// - Throws: ``MPDError`` naming the template's line.
    func checkNumbers() throws(MPDError) {
        for (index, period) in periods.enumerated() {
            let periodSeconds = period.duration ?? periodEnd(after: index).map { $0 - (period.start ?? 0) }
            for set in period.adaptationSets {
                for representation in set.representations {
                    guard case .template(let template)? = representation.addressing, template.media != nil else {
                        continue
                    }
                    do throws(MPDError) {
                        _ = try template.segmentRuns(periodSeconds: periodSeconds, limit: .max)
                    } catch  where error.kind == .uncountable {
                        continue
                    }
                }
            }
        }
    }
}

/// How much listing an MPD's segments may produce (``MPD/objectsByRepresentation(documentURL:limits:keeping:)``).
public struct ExpansionLimits: Sendable, Hashable {
    /// The most segments of one MPD (default 100,000).
    public var maxSegments: Int
    /// The most segments of one Representation (default ``MPD/maxSegmentsPerRepresentation``).
    public var maxSegmentsPerRepresentation: Int
    /// The most bytes of URLs listed, bounded from each template before any is expanded (default 32 MiB).
    public var maxURLBytes: Int

    /// Creates limits.
    public init(
        maxSegments: Int = 100_000, maxSegmentsPerRepresentation: Int = MPD.maxSegmentsPerRepresentation,
        maxURLBytes: Int = 32 << 20
    ) {
        self.maxSegments = maxSegments
        self.maxSegmentsPerRepresentation = maxSegmentsPerRepresentation
        self.maxURLBytes = maxURLBytes
    }

    /// 100,000 segments, 32 MiB of URLs.
    public static let `default` = ExpansionLimits()
}

/// `count` segments of `duration` from `time`, numbered from `firstNumber`: one `S` of a `SegmentTimeline`, or a
/// whole `@duration` template. Made only by ``SegmentTemplate/segmentRuns(periodSeconds:limit:)``, which checks
/// that the last number and the last time fit.
struct SegmentRun: Sendable, Hashable {
    var firstNumber: Int
    var time: Int
    var duration: Int
    var count: Int
}

extension SegmentTemplate {
    /// The segments as runs, counted without listing them: from the `SegmentTimeline` (an `r` of -1 repeats to the
    /// next `S` or the period's end), else `@duration` over the period's length. Every number a segment gets, every
    /// time, and every count is checked to fit; a Double becomes an Int only once checked.
    /// - Parameters:
    ///   - periodSeconds: the period's length, if known.
    ///   - limit: the most segments.
    /// - Throws: ``MPDError``: `.uncountable` when there is nothing to count by, `.invalidValue` for a number that
    ///   overflows or more than `limit` segments.
    func segmentRuns(
        periodSeconds: Double?, limit: Int = MPD.maxSegmentsPerRepresentation
    ) throws(MPDError)
        -> [SegmentRun]
    {
        let first = startNumber ?? 1
        let scale = max(1, timescale ?? 1)
        var runs: [SegmentRun] = []
        var total = 0
        func add(time: Int, duration: Int, count: Int) throws(MPDError) {
            guard count > 0 else { return }
            let (sum, overflow) = total.addingReportingOverflow(count)
            guard !overflow, sum <= limit else {
                throw MPDError(.invalidValue, "more than \(limit) segments in one Representation", line: line)
            }
            // The last segment's number and time must fit, as a player computes them.
            let lastNumber = first.addingReportingOverflow(sum - 1)
            let span = (count - 1).multipliedReportingOverflow(by: duration)
            let lastTime = time.addingReportingOverflow(span.partialValue)
            guard !lastNumber.overflow, !span.overflow, !lastTime.overflow else {
                throw MPDError(
                    .invalidValue, "segment numbers or times overflow (startNumber \(first), t \(time), d \(duration))",
                    line: line)
            }
            runs.append(SegmentRun(firstNumber: first + total, time: time, duration: duration, count: count))
            total = sum
        }
        if let timeline {
            var time = 0
            for (index, entry) in timeline.enumerated() {
                time = entry.time ?? time
                guard entry.duration > 0 else { throw MPDError(.invalidValue, "S@d is 0", line: line) }
                var count: Int
                if entry.repeatCount < 0 {
                    let end: Double
                    if index + 1 < timeline.count, let next = timeline[index + 1].time {
                        end = Double(next)
                    } else if let periodSeconds {
                        end = periodSeconds * Double(scale) + Double(presentationTimeOffset ?? 0)
                    } else {
                        throw MPDError(.uncountable, "S@r=-1 with no end to repeat to", line: line)
                    }
                    count = try Self.checkedCount((end - Double(time)) / Double(entry.duration), limit: limit, line)
                } else {
                    let (repeats, overflow) = entry.repeatCount.addingReportingOverflow(1)
                    guard !overflow else { throw MPDError(.invalidValue, "S@r is out of range", line: line) }
                    count = repeats
                }
                try add(time: time, duration: entry.duration, count: count)
                // The next S starts where this one ends, unless it says otherwise.
                let (end, overflow) = count.multipliedReportingOverflow(by: entry.duration)
                let next = time.addingReportingOverflow(end)
                guard !overflow, !next.overflow else {
                    throw MPDError(.invalidValue, "SegmentTimeline times overflow", line: line)
                }
                time = next.partialValue
            }
            return runs
        }
        guard let duration, duration > 0, let periodSeconds else {
            throw MPDError(
                .uncountable, "SegmentTemplate with neither a SegmentTimeline nor a @duration to count", line: line)
        }
        let count = try Self.checkedCount(periodSeconds * Double(scale) / Double(duration), limit: limit, line)
        try add(time: 0, duration: duration, count: count)
        return runs
    }

    /// A segment count from a division of Doubles, rounded up: finite, not negative, and within `limit`.
    private static func checkedCount(_ value: Double, limit: Int, _ line: Int?) throws(MPDError) -> Int {
        let rounded = value.rounded(.up)
        guard rounded.isFinite, rounded < 9.0e18, rounded <= Double(limit) else {
            throw MPDError(.invalidValue, "more than \(limit) segments in one Representation", line: line)
        }
        return rounded <= 0 ? 0 : Int(rounded)
    }

    /// The most bytes ``expand(_:representation:number:time:)`` can make of `pattern` for `representation`: each
    /// identifier becomes at most 64 digits or the Representation's id.
    static func expandedBound(_ pattern: String, representation: Representation) -> Int {
        let dollars = pattern.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "$") ? 1 : 0) }
        let each = max(64, representation.id.utf8.count)
        let (grown, overflow) = (dollars / 2).multipliedReportingOverflow(by: each)
        return overflow ? .max : pattern.utf8.count.addingReportingOverflow(grown).partialValue
    }

    /// `pattern` with `$RepresentationID$`, `$Number$`, `$Bandwidth$`, `$Time$` (each with an optional `%0Nd`
    /// width) and `$$` substituted (ISO/IEC 23009-1 section 5.3.9.4.4).
    static func expand(_ pattern: String, representation: Representation, number: Int, time: Int) -> String {
        var output = ""
        var rest = Substring(pattern)
        while let open = rest.firstIndex(of: "$") {
            output += rest[..<open]
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "$") else {
                output += rest[open...]
                return output
            }
            let identifier = rest[afterOpen..<close]
            rest = rest[rest.index(after: close)...]
            if identifier.isEmpty {
                output += "$"
                continue
            }
            // `$%$` or `$%05d$` has no name before its `%`: kept as written, like any unknown identifier.
            let parts = identifier.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0]
            let width = parts.count > 1 ? Int(parts[1].dropFirst().dropLast()) ?? 0 : 0
            func padded(_ value: Int) -> String {
                let digits = String(value)
                return String(repeating: "0", count: max(0, min(width, 64) - digits.count)) + digits
            }
            switch name {
            case "RepresentationID": output += representation.id
            case "Number": output += padded(number)
            case "Bandwidth": output += padded(representation.bandwidth)
            case "Time": output += padded(time)
            default: output += "$" + identifier + "$"
            }
        }
        return output + rest
    }
}
