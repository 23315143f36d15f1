import ManifestURLs

/// A manifest view applied to an MPD's tree, before it is read and rewritten (see ``ManifestView``):
///
/// - Video Representations (and trick-mode ones) by `@bandwidth` and `@height`; every Representation by `@codecs`
///   (each codec must start with a listed prefix); its AdaptationSet's values count where its own are absent.
/// - Audio AdaptationSets by `@lang`, text ones (subtitles) by `@lang` or all of them (`none`); trick-mode
///   AdaptationSets (`http://dashif.org/guidelines/trickmode`) all of them with `iframes=none`.
/// - An AdaptationSet left with no Representation goes; a Period left with no video (or, without video, no audio)
///   leaves nothing to play: an error.
/// - A dynamic MPD's window: `@timeShiftBufferDepth` no longer than it, and each `SegmentTimeline` cut to the
///   segments that end within it of the timeline's end (`@startNumber` moved on by the segments cut).
enum MPDView {
    static let trickModeScheme = "http://dashif.org/guidelines/trickmode"

    /// Applies `view` to the tree under `root` (the `MPD` element).
    static func apply(_ view: ManifestView, to root: XMLElement) throws(ManifestViewError) {
        if view.filtersStreams {
            for period in root.children where period.isDASH && period.name == "Period" {
                try filter(period, view)
            }
        }
        if let window = view.windowSeconds, root.attribute("type") == "dynamic" {
            let depth = root.attribute("timeShiftBufferDepth").flatMap(ISODuration.seconds)
            if depth.map({ $0 > window }) ?? true { root.setAttribute("timeShiftBufferDepth", "PT\(window)S") }
            trimTimelines(under: root, window: window)
        }
    }

    /// What an AdaptationSet holds.
    private enum Kind { case video, audio, text, other }

    private static func kind(of set: XMLElement, _ representations: [XMLElement]) -> Kind {
        let type =
            set.attribute("contentType") ?? set.attribute("mimeType")
            ?? representations.first?.attribute("mimeType") ?? ""
        let codecs = (set.attribute("codecs") ?? representations.first?.attribute("codecs") ?? "").lowercased()
        if type.hasPrefix("video") { return .video }
        if type.hasPrefix("audio") { return .audio }
        if type.hasPrefix("text") || type.contains("ttml") || codecs.hasPrefix("stpp") || codecs.hasPrefix("wvtt") {
            return .text
        }
        return .other
    }

    private static func filter(_ period: XMLElement, _ view: ManifestView) throws(ManifestViewError) {
        var had: Set<String> = []
        var kept: Set<String> = []
        for set in period.children where set.isDASH && set.name == "AdaptationSet" {
            let representations = set.children.filter { $0.isDASH && $0.name == "Representation" }
            let kind = kind(of: set, representations)
            let trickMode = set.children.contains {
                ($0.name == "EssentialProperty" || $0.name == "SupplementalProperty")
                    && $0.attribute("schemeIdUri") == trickModeScheme
            }
            let label = trickMode ? "trick" : "\(kind)"
            had.insert(label)
            var keepsSet: Bool
            switch kind {
            case _ where trickMode: keepsSet = !view.removesIFrames
            case .audio: keepsSet = view.keepsAudio(language: set.attribute("lang"))
            case .text: keepsSet = view.keepsSubtitles(language: set.attribute("lang"))
            case .video, .other: keepsSet = true
            }
            if keepsSet {
                var left = representations.count
                for representation in representations {
                    func value(_ name: String) -> String? { representation.attribute(name) ?? set.attribute(name) }
                    var keeps = view.keepsCodecs(value("codecs"))
                    if kind == .video || trickMode {
                        if let bounds = view.bandwidth, let bandwidth = value("bandwidth").flatMap({ Int($0) }),
                            !bounds.contains(bandwidth)
                        {
                            keeps = false
                        }
                        if let bounds = view.height, let height = value("height").flatMap({ Int($0) }),
                            !bounds.contains(height)
                        {
                            keeps = false
                        }
                    }
                    if !keeps {
                        representation.remove()
                        left -= 1
                    }
                }
                keepsSet = left > 0 || representations.isEmpty
            }
            if keepsSet { kept.insert(label) } else { set.remove() }
        }
        let essential = had.contains("video") ? "video" : had.contains("audio") ? "audio" : nil
        if let essential, !kept.contains(essential) {
            throw .leavesNothing("no \(essential) Representation of a Period is left")
        }
    }

    /// Cuts every `SegmentTimeline` under `element` to the window; `inherited` holds the `@timescale` and
    /// `@startNumber` of the SegmentTemplates above (a Period's, an AdaptationSet's), which a Representation's own
    /// template takes unless it says otherwise.
    private static func trimTimelines(under element: XMLElement, window: Double, inherited: [String: String] = [:]) {
        var inherited = inherited
        let children = element.children.filter(\.isDASH)
        for template in children where template.name == "SegmentTemplate" {
            for name in ["timescale", "startNumber"] {
                if let value = template.attribute(name) { inherited[name] = value }
            }
        }
        for child in children {
            if child.name == "SegmentTemplate" {
                if let timeline = child.children.first(where: { $0.isDASH && $0.name == "SegmentTimeline" }) {
                    trim(timeline, template: child, inherited: inherited, window: window)
                }
            } else {
                trimTimelines(under: child, window: window, inherited: inherited)
            }
        }
    }

    /// The fewest segments a window keeps (as HLS keeps three target durations).
    static let minimumSegments = 3

    /// Cuts one timeline; left as it is when it repeats to the Period's end (`r="-1"`), or its numbers overflow.
    private static func trim(
        _ timeline: XMLElement, template: XMLElement, inherited: [String: String], window: Double
    ) {
        let timescale = Int(template.attribute("timescale") ?? inherited["timescale"] ?? "1") ?? 1
        guard timescale > 0, window * Double(timescale) < Double(Int.max / 4) else { return }
        var runs: [(time: Int, duration: Int, count: Int)] = []
        var next = 0
        var total = 0
        let entries = timeline.children.filter { $0.isDASH && $0.name == "S" }
        for entry in entries {
            guard let duration = entry.attribute("d").flatMap({ Int($0) }), duration > 0,
                let repeats = Int(entry.attribute("r") ?? "0"), repeats >= 0, repeats < Int(Int32.max)
            else { return }
            let time = entry.attribute("t").flatMap { Int($0) } ?? next
            let (span, overflow) = duration.multipliedReportingOverflow(by: repeats + 1)
            guard time >= 0, !overflow, time <= Int.max - span, total <= Int.max - repeats - 1 else { return }
            runs.append((time, duration, repeats + 1))
            next = time + span
            total += repeats + 1
        }
        guard let last = runs.last else { return }
        let end = last.time + last.duration * last.count
        let cutoff = end - max(1, Int(window * Double(timescale)))
        // The segments that end by the cutoff go, but never the newest few.
        var dropped = 0
        for run in runs {
            let ending = run.time + run.duration * run.count
            if ending <= cutoff {
                dropped += run.count
            } else {
                if run.time < cutoff { dropped += (cutoff - run.time) / run.duration }
                break
            }
        }
        dropped = min(dropped, max(0, total - minimumSegments))
        guard dropped > 0 else { return }
        var kept: [(time: Int, duration: Int, count: Int)] = []
        var toDrop = dropped
        for run in runs {
            let cut = min(toDrop, run.count)
            toDrop -= cut
            if cut < run.count { kept.append((run.time + cut * run.duration, run.duration, run.count - cut)) }
        }
        for entry in entries { entry.remove() }
        for (index, run) in kept.enumerated() {
            var attributes: [(String, String)] = []
            if index == 0 || run.time != kept[index - 1].time + kept[index - 1].duration * kept[index - 1].count {
                attributes.append(("t", String(run.time)))
            }
            attributes.append(("d", String(run.duration)))
            if run.count > 1 { attributes.append(("r", String(run.count - 1))) }
            timeline.addChild("S", attributes: attributes)
        }
        let start = Int(template.attribute("startNumber") ?? inherited["startNumber"] ?? "1") ?? 1
        if start <= Int.max - dropped { template.setAttribute("startNumber", String(start + dropped)) }
    }
}
