extension Tag {
    /// Decodes a tag line (without surrounding blanks).
    /// - Parameters:
    ///   - line: the tag line, starting with `#EXT`.
    ///   - name: the tag it was identified as.
    init(decoding line: Substring, name: TagName) {
        let colon = line.firstIndex(of: ":")
        let value = colon.map { line[line.index(after: $0)...] }
        guard name != .unknown else {
            self = .unknown(
                name: String(line[line.index(after: line.startIndex)..<(colon ?? line.endIndex)]),
                value: value.map(String.init))
            return
        }
        let decoded: Tag? =
            name.hasAttributeList
            ? value.flatMap(AttributeList.init(parsing:)).flatMap { Tag.decode(name, $0) }
            : Tag.decode(name, value: value)
        self = decoded ?? .malformed(name, value: value.map(String.init) ?? "")
    }

    private static func decode(_ name: TagName, value: Substring?) -> Tag? {
        let trimmed = value?.trimmingBlanks()
        switch name {
        case .extm3u: return .header
        case .version: return trimmed.flatMap(PlaylistNumbers.decimalInteger).map(Tag.version)
        case .independentSegments: return .independentSegments
        case .targetDuration: return trimmed.flatMap(PlaylistNumbers.wholeSeconds).map(Tag.targetDuration)
        case .mediaSequence: return trimmed.flatMap(PlaylistNumbers.decimalInteger).map(Tag.mediaSequence)
        case .discontinuitySequence:
            return trimmed.flatMap(PlaylistNumbers.decimalInteger).map(Tag.discontinuitySequence)
        case .endList: return .endList
        case .iFramesOnly: return .iFramesOnly
        case .discontinuity: return .discontinuity
        case .gap: return .gap
        case .bitrate: return trimmed.flatMap(PlaylistNumbers.decimalInteger).map(Tag.bitrate)
        case .byteRange: return trimmed.flatMap(PlaylistByteRange.init(parsing:)).map(Tag.byteRange)
        case .programDateTime: return trimmed.map { .programDateTime(String($0)) }
        case .playlistType:
            switch trimmed?.uppercased() {
            case "VOD": return .playlistType(.vod)
            case "EVENT": return .playlistType(.event)
            case let other?: return .playlistType(.other(other))
            case nil: return nil
            }
        case .extinf:
            guard let value else { return nil }
            let comma = value.firstIndex(of: ",")
            let durationText = value[..<(comma ?? value.endIndex)].trimmingBlanks()
            guard let duration = PlaylistNumbers.signedSeconds(durationText) else { return nil }
            let title = comma.map { String(value[value.index(after: $0)...]) } ?? ""
            return .segmentInfo(SegmentInfo(duration: duration, title: title))
        default: return nil
        }
    }

    private static func decode(_ name: TagName, _ list: AttributeList) -> Tag? {
        switch name {
        case .start:
            guard let offset = list.signedSeconds("TIME-OFFSET") else { return nil }
            return .start(StartTag(timeOffset: offset, precise: list.bool("PRECISE") ?? false, attributes: list))
        case .define:
            if let name = list.string("NAME"), let value = list.string("VALUE") {
                return .define(VariableDefinition(name: name, source: .value(value)))
            }
            if let name = list.string("IMPORT") { return .define(VariableDefinition(name: name, source: .import)) }
            if let name = list.string("QUERYPARAM") {
                return .define(VariableDefinition(name: name, source: .queryParameter))
            }
            return nil
        case .partInf:
            return list.seconds("PART-TARGET").map { .partInf(PartInfTag(partTarget: $0, attributes: list)) }
        case .serverControl:
            return .serverControl(
                ServerControlTag(
                    canSkipUntil: list.seconds("CAN-SKIP-UNTIL"),
                    canSkipDateRanges: list.bool("CAN-SKIP-DATERANGES") ?? false,
                    holdBack: list.seconds("HOLD-BACK"), partHoldBack: list.seconds("PART-HOLD-BACK"),
                    canBlockReload: list.bool("CAN-BLOCK-RELOAD") ?? false, attributes: list))
        case .key, .sessionKey:
            guard let method = list.string("METHOD") else { return nil }
            let key = KeyTag(
                method: method, uri: list.string("URI"), iv: list.hexadecimal("IV"),
                keyFormat: list.string("KEYFORMAT"), keyFormatVersions: list.string("KEYFORMATVERSIONS"),
                attributes: list)
            return name == .key ? .key(key) : .sessionKey(key)
        case .map:
            guard let uri = list.string("URI") else { return nil }
            return .map(
                MapTag(
                    uri: uri, byteRange: list.string("BYTERANGE").flatMap(PlaylistByteRange.init(parsing:)),
                    attributes: list))
        case .dateRange:
            guard let id = list.string("ID") else { return nil }
            return .dateRange(
                DateRangeTag(
                    id: id, classID: list.string("CLASS"), startDate: list.string("START-DATE"),
                    endDate: list.string("END-DATE"), duration: list.seconds("DURATION"),
                    plannedDuration: list.seconds("PLANNED-DURATION"), endOnNext: list.bool("END-ON-NEXT") ?? false,
                    assetURI: list.string("X-ASSET-URI"), assetList: list.string("X-ASSET-LIST"), attributes: list))
        case .part:
            guard let uri = list.string("URI"), let duration = list.seconds("DURATION") else { return nil }
            return .part(
                PartTag(
                    uri: uri, duration: duration, independent: list.bool("INDEPENDENT") ?? false,
                    byteRange: list.string("BYTERANGE").flatMap(PlaylistByteRange.init(parsing:)),
                    gap: list.bool("GAP") ?? false, attributes: list))
        case .preloadHint:
            guard let type = list.string("TYPE"), let uri = list.string("URI") else { return nil }
            return .preloadHint(
                PreloadHintTag(
                    type: type, uri: uri, byteRangeStart: list.integer("BYTERANGE-START"),
                    byteRangeLength: list.integer("BYTERANGE-LENGTH"), attributes: list))
        case .renditionReport:
            return .renditionReport(
                RenditionReportTag(
                    uri: list.string("URI"), lastMediaSequence: list.integer("LAST-MSN"),
                    lastPart: list.integer("LAST-PART"), attributes: list))
        case .skip:
            guard let skipped = list.integer("SKIPPED-SEGMENTS") else { return nil }
            let removed = list.string("RECENTLY-REMOVED-DATERANGES")?.split(separator: "\t").map(String.init) ?? []
            return .skip(SkipTag(skippedSegments: skipped, recentlyRemovedDateRanges: removed, attributes: list))
        case .media:
            guard let type = list.string("TYPE"), let group = list.string("GROUP-ID"), let name = list.string("NAME")
            else { return nil }
            return .media(
                MediaTag(
                    type: type, groupID: group, name: name, uri: list.string("URI"), language: list.string("LANGUAGE"),
                    associatedLanguage: list.string("ASSOC-LANGUAGE"), isDefault: list.bool("DEFAULT") ?? false,
                    autoselect: list.bool("AUTOSELECT") ?? false, forced: list.bool("FORCED") ?? false,
                    instreamID: list.string("INSTREAM-ID"), characteristics: list.string("CHARACTERISTICS"),
                    channels: list.string("CHANNELS"), attributes: list))
        case .streamInf, .iFrameStreamInf:
            guard let bandwidth = list.integer("BANDWIDTH") else { return nil }
            let stream = StreamInfTag(
                bandwidth: bandwidth, averageBandwidth: list.integer("AVERAGE-BANDWIDTH"), score: list.double("SCORE"),
                codecs: list.string("CODECS"), supplementalCodecs: list.string("SUPPLEMENTAL-CODECS"),
                resolution: list.resolution("RESOLUTION"), frameRate: list.double("FRAME-RATE"),
                hdcpLevel: list.string("HDCP-LEVEL"), videoRange: list.string("VIDEO-RANGE"),
                stableVariantID: list.string("STABLE-VARIANT-ID"), audio: list.string("AUDIO"),
                video: list.string("VIDEO"), subtitles: list.string("SUBTITLES"),
                closedCaptions: list.string("CLOSED-CAPTIONS"), pathwayID: list.string("PATHWAY-ID"),
                uri: list.string("URI"), attributes: list)
            return name == .streamInf ? .streamInf(stream) : .iFrameStreamInf(stream)
        case .sessionData:
            guard let id = list.string("DATA-ID") else { return nil }
            return .sessionData(
                SessionDataTag(
                    dataID: id, value: list.string("VALUE"), uri: list.string("URI"), format: list.string("FORMAT"),
                    language: list.string("LANGUAGE"), attributes: list))
        case .contentSteering:
            guard let uri = list.string("SERVER-URI") else { return nil }
            return .contentSteering(
                ContentSteeringTag(
                    serverURI: uri, pathwayID: list.string("PATHWAY-ID"),
                    attributes: list))
        default:
            return nil
        }
    }
}
