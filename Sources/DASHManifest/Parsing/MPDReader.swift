/// Reads the ``MPD`` model from a parsed tree: DASH elements only (elements of other namespaces are skipped), every
/// number checked, and every `SegmentTemplate`'s segment numbers and times checked to fit as a player computes them
/// (``MPD/checkNumbers()``).
enum MPDReader {
    /// The model of the document rooted at `root`.
    /// - Throws: ``MPDError`` for a root that is not `MPD`, a missing required attribute or a value out of range.
    static func read(_ root: XMLElement) throws(MPDError) -> MPD {
        guard root.name == "MPD", root.isDASH else {
            throw MPDError(.notAnMPD, "the root element is <\(root.name)>, not <MPD>", line: root.line)
        }
        let type: MPD.PresentationType
        switch root.attribute("type") ?? "static" {
        case "static": type = .static
        case "dynamic": type = .dynamic
        case let other:
            throw MPDError(.invalidValue, "MPD@type \"\(other)\" is neither static nor dynamic", line: root.line)
        }
        let children = root.children.filter(\.isDASH)
        var periods: [Period] = []
        for element in children where element.name == "Period" {
            periods.append(try period(element))
        }
        let mpd = MPD(
            type: type, minimumUpdatePeriod: try duration(root, "minimumUpdatePeriod"),
            mediaPresentationDuration: try duration(root, "mediaPresentationDuration"),
            baseURLs: texts(children, "BaseURL"), locations: texts(children, "Location"), periods: periods)
        try mpd.checkNumbers()
        return mpd
    }

    private static func period(_ element: XMLElement) throws(MPDError) -> Period {
        let children = element.children.filter(\.isDASH)
        let template = try children.first { $0.name == "SegmentTemplate" }.map(segmentTemplate)
        var sets: [AdaptationSet] = []
        for child in children where child.name == "AdaptationSet" {
            sets.append(try adaptationSet(child, inherited: template))
        }
        return Period(
            id: element.attribute("id"), duration: try duration(element, "duration"),
            baseURLs: texts(children, "BaseURL"),
            segmentTemplate: template, adaptationSets: sets)
    }

    private static func adaptationSet(
        _ element: XMLElement, inherited: SegmentTemplate?
    ) throws(MPDError) -> AdaptationSet {
        let children = element.children.filter(\.isDASH)
        let template =
            try children.first { $0.name == "SegmentTemplate" }.map(segmentTemplate)?.inheriting(
                from: inherited) ?? inherited
        var representations: [Representation] = []
        for child in children where child.name == "Representation" {
            representations.append(try representation(child, inherited: template))
        }
        return AdaptationSet(
            id: element.attribute("id"), mimeType: element.attribute("mimeType") ?? element.attribute("contentType"),
            baseURLs: texts(children, "BaseURL"), segmentTemplate: template, representations: representations)
    }

    private static func representation(
        _ element: XMLElement, inherited: SegmentTemplate?
    ) throws(MPDError) -> Representation {
        guard let id = element.attribute("id") else {
            throw MPDError(.invalidValue, "Representation without @id", line: element.line)
        }
        guard let bandwidth = try integer(element, "bandwidth") else {
            throw MPDError(.invalidValue, "Representation \(id) without @bandwidth", line: element.line)
        }
        let children = element.children.filter(\.isDASH)
        var addressing: SegmentAddressing?
        if let template = children.first(where: { $0.name == "SegmentTemplate" }) {
            addressing = .template(try segmentTemplate(template).inheriting(from: inherited))
        } else if let list = children.first(where: { $0.name == "SegmentList" }) {
            addressing = .list(segmentList(list))
        } else if let base = children.first(where: { $0.name == "SegmentBase" }) {
            addressing = .base(
                SegmentBase(
                    initialization: urlWithRange(base.children.first { $0.name == "Initialization" }),
                    indexRange: base.attribute("indexRange")))
        } else if let inherited {
            addressing = .template(inherited)
        }
        return Representation(
            id: id, bandwidth: bandwidth, baseURLs: texts(children, "BaseURL"), addressing: addressing)
    }

    private static func segmentTemplate(_ element: XMLElement) throws(MPDError) -> SegmentTemplate {
        var timeline: [TimelineEntry]?
        if let line = element.children.first(where: { $0.name == "SegmentTimeline" }) {
            var entries: [TimelineEntry] = []
            for s in line.children where s.name == "S" {
                guard let duration = try integer(s, "d") else {
                    throw MPDError(.invalidValue, "SegmentTimeline S without @d", line: s.line)
                }
                let repeats = try integer(s, "r", allowNegative: true) ?? 0
                guard repeats >= -1 else {
                    throw MPDError(.invalidValue, "S@r \(repeats) is less than -1", line: s.line)
                }
                entries.append(TimelineEntry(time: try integer(s, "t"), duration: duration, repeatCount: repeats))
            }
            timeline = entries
        }
        return SegmentTemplate(
            media: element.attribute("media"), initialization: element.attribute("initialization"),
            index: element.attribute("index"), bitstreamSwitching: element.attribute("bitstreamSwitching"),
            startNumber: try integer(element, "startNumber"),
            presentationTimeOffset: try integer(element, "presentationTimeOffset"),
            timescale: try integer(element, "timescale"),
            duration: try integer(element, "duration"), timeline: timeline, line: element.line)
    }

    private static func segmentList(_ element: XMLElement) -> SegmentList {
        SegmentList(
            startNumber: Int(element.attribute("startNumber") ?? ""),
            initialization: urlWithRange(element.children.first { $0.name == "Initialization" }),
            segments: element.children.filter { $0.name == "SegmentURL" }.map {
                SegmentURL(media: $0.attribute("media"), mediaRange: $0.attribute("mediaRange"))
            })
    }

    private static func urlWithRange(_ element: XMLElement?) -> URLWithRange? {
        element.map { URLWithRange(sourceURL: $0.attribute("sourceURL"), range: $0.attribute("range")) }
    }

    private static func texts(_ elements: [XMLElement], _ name: String) -> [String] {
        elements.filter { $0.name == name }.map { String($0.text.trimmingSpaces) }
    }

    /// A non-negative (or, with `allowNegative`, any) decimal integer attribute that fits in `Int`.
    private static func integer(
        _ element: XMLElement, _ name: String, allowNegative: Bool = false
    ) throws(MPDError) -> Int? {
        guard let text = element.attribute(name) else { return nil }
        guard let value = Int(text.trimmingSpaces), allowNegative || value >= 0 else {
            throw MPDError(
                .invalidValue, "\(element.name)@\(name) \"\(text)\" is not a number in range", line: element.line)
        }
        return value
    }

    private static func duration(_ element: XMLElement, _ name: String) throws(MPDError) -> Double? {
        guard let text = element.attribute(name) else { return nil }
        guard let seconds = ISODuration.seconds(text) else {
            throw MPDError(.invalidValue, "\(element.name)@\(name) \"\(text)\" is not a duration", line: element.line)
        }
        return seconds
    }
}
