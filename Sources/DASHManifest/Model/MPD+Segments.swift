import HLSPlaylist

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
    public static let maxSegmentsPerRepresentation = 500_000

    /// Every object the Representations `keeping` accepts need, period after period, with URLs resolved along the
    /// `BaseURL` chain (the first `BaseURL` of each level) from `documentURL`.
    /// - Parameters:
    ///   - documentURL: the MPD's URL (after redirects).
    ///   - keeping: which Representations to include.
    /// - Returns: the objects in order: per Representation, its initialization, then its segments.
    /// - Throws: ``MPDError`` when a template's segments cannot be counted (no duration to divide) or number
    ///   more than ``maxSegmentsPerRepresentation``.
    public func objects(
        documentURL: String, keeping: (Representation) -> Bool = { _ in true }
    ) throws(MPDError) -> [MPDObject] {
        try objectsByRepresentation(documentURL: documentURL, keeping: keeping).flatMap(\.objects)
    }

    /// ``objects(documentURL:keeping:)`` Representation by Representation (period after period), each with its
    /// period's id and its own: the sequence a player of that Representation fetches.
    public func objectsByRepresentation(
        documentURL: String, keeping: (Representation) -> Bool = { _ in true }
    ) throws(MPDError) -> [(id: String, objects: [MPDObject])] {
        var result: [(id: String, objects: [MPDObject])] = []
        let mpdBase = Self.base(baseURLs, documentURL)
        for (index, period) in periods.enumerated() {
            let periodBase = Self.base(period.baseURLs, mpdBase)
            let periodSeconds = period.duration ?? periodEnd(after: index).map { $0 - (period.start ?? 0) }
            for set in period.adaptationSets {
                let setBase = Self.base(set.baseURLs, periodBase)
                for representation in set.representations where keeping(representation) {
                    let base = Self.base(representation.baseURLs, setBase)
                    let objects = try Self.objects(of: representation, base: base, periodSeconds: periodSeconds)
                    result.append(("\(period.id ?? String(index))/\(representation.id)", objects))
                }
            }
        }
        return result
    }

    /// When the period after `index` starts, or the presentation ends.
    private func periodEnd(after index: Int) -> Double? {
        if index + 1 < periods.count, let next = periods[index + 1].start { return next }
        return mediaPresentationDuration
    }

    private static func base(_ baseURLs: [String], _ parent: String) -> String {
        baseURLs.first.flatMap { URLResolution.resolve($0, against: parent) } ?? parent
    }

    private static func objects(
        of representation: Representation, base: String, periodSeconds: Double?
    ) throws(MPDError) -> [MPDObject] {
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
            for (number, time) in try template.segmentNumbersAndTimes(periodSeconds: periodSeconds) {
                if let segment = object(fill(media, number, time), range: nil, role: .media) { result.append(segment) }
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

    /// `first-last` as a closed range, checked.
    static func range(_ text: String) -> ClosedRange<Int64>? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, let first = Int64(parts[0]), let last = Int64(parts[1]), first >= 0, first <= last
        else { return nil }
        return first...last
    }
}

extension SegmentTemplate {
    /// The number and `$Time$` of every segment: from the `SegmentTimeline` (an `r` of -1 repeats to the next `S`
    /// or the period's end), else `@duration` over the period's length.
    /// - Throws: ``MPDError`` when there is no way to count them, or too many.
    func segmentNumbersAndTimes(periodSeconds: Double?) throws(MPDError) -> [(Int, Int)] {
        let first = startNumber ?? 1
        let scale = max(1, timescale ?? 1)
        let limit = MPD.maxSegmentsPerRepresentation
        var result: [(Int, Int)] = []
        if let timeline {
            var time = 0
            for (index, entry) in timeline.enumerated() {
                time = entry.time ?? time
                guard entry.duration > 0 else { throw MPDError(.invalidValue, "S@d is 0") }
                var count = entry.repeatCount + 1
                if entry.repeatCount < 0 {
                    let end: Double
                    if index + 1 < timeline.count, let next = timeline[index + 1].time {
                        end = Double(next)
                    } else if let periodSeconds {
                        end = periodSeconds * Double(scale) + Double(presentationTimeOffset ?? 0)
                    } else {
                        throw MPDError(.invalidValue, "S@r=-1 with no end to repeat to")
                    }
                    count = Int(max(0, ((end - Double(time)) / Double(entry.duration)).rounded(.up)))
                }
                guard count <= limit - result.count else {
                    throw MPDError(.invalidValue, "more than \(limit) segments in one Representation")
                }
                for _ in 0..<count {
                    result.append((first + result.count, time))
                    let (next, overflow) = time.addingReportingOverflow(entry.duration)
                    guard !overflow else { throw MPDError(.invalidValue, "SegmentTimeline times overflow") }
                    time = next
                }
            }
            return result
        }
        guard let duration, duration > 0, let periodSeconds else {
            throw MPDError(.invalidValue, "SegmentTemplate with neither a SegmentTimeline nor a @duration to count")
        }
        let count = (periodSeconds * Double(scale) / Double(duration)).rounded(.up)
        guard count.isFinite, count <= Double(limit) else {
            throw MPDError(.invalidValue, "more than \(limit) segments in one Representation")
        }
        return (0..<Int(count)).map { (first + $0, $0 * duration) }
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
            let parts = identifier.split(separator: "%", maxSplits: 1)
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
