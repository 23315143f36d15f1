import Foundation
import ManifestURLs

extension Playlist {
    /// Parses a playlist.
    ///
    /// A UTF-8 BOM, CRLF and bare CR line endings are accepted; blank lines, comments and unknown
    /// tags are kept in order. Only what would misplace a URI is an error: see ``PlaylistError``.
    /// - Parameters:
    ///   - bytes: the playlist as received.
    ///   - limits: line and body size limits.
    /// - Throws: ``PlaylistError`` with the line it concerns.
    public init(parsing bytes: [UInt8], limits: ParseLimits = .default) throws(PlaylistError) {
        self = try PlaylistParser(limits: limits).parse(bytes)
    }

    /// Parses a playlist from text.
    /// - Parameters:
    ///   - text: the playlist.
    ///   - limits: line and body size limits.
    /// - Throws: ``PlaylistError`` with the line it concerns.
    public init(parsing text: String, limits: ParseLimits = .default) throws(PlaylistError) {
        try self.init(parsing: Array(text.utf8), limits: limits)
    }

    /// Parses a playlist from `Data`.
    /// - Parameters:
    ///   - data: the playlist as received.
    ///   - limits: line and body size limits.
    /// - Throws: ``PlaylistError`` with the line it concerns.
    public init(parsing data: Data, limits: ParseLimits = .default) throws(PlaylistError) {
        try self.init(parsing: [UInt8](data), limits: limits)
    }
}

/// Splits the input into lines, classifies them and finds the URI places.
struct PlaylistParser {
    let limits: ParseLimits

    func parse(_ input: [UInt8]) throws(PlaylistError) -> Playlist {
        // Offsets are indexed as 32-bit numbers: never more than 1 GiB, whatever the limits say.
        let maxBody = min(limits.maxBodyBytes, 1 << 30)
        guard input.count <= maxBody else { throw .bodyTooLarge(bytes: input.count, limit: maxBody) }
        var source = input
        if source.starts(with: [0xEF, 0xBB, 0xBF]) { source.removeFirst(3) }
        let maxLines = limits.maxLines
        let survey = source.withUnsafeBufferPointer { ByteSurvey($0, maxLineFeeds: maxLines) }
        guard !survey.hasTooManyLineFeeds else { throw .tooManyLines(limit: maxLines) }
        if !survey.isASCII, let badLine = UTF8Check.firstInvalidLine(source) { throw .notUTF8(line: badLine) }

        var records: [LineRecord] = []
        var places: [URIPlace] = []
        var definitions: [VariableDefinition] = []
        var spans: [AttributeSpan] = []
        let limit = limits.maxLineBytes
        var failure: PlaylistError?

        source.withUnsafeBufferPointer { buffer in
            let splitter = LineSplitter(buffer, survey: survey)
            // One record per line, counted first (by the survey), so that a large playlist's index is allocated once;
            // a media playlist has a URI place per two lines at most, but for its keys and maps.
            let lineCountBound = min(splitter.lineCountBound, maxLines)
            records.reserveCapacity(lineCountBound)
            places.reserveCapacity(lineCountBound / 2 + 16)
            var sawHeader = false
            splitter.forEachLine { start, end in
                let lineIndex = records.count
                // LFs were counted by the survey; lines ended by a CR are counted here.
                guard lineIndex < maxLines else {
                    failure = .tooManyLines(limit: maxLines)
                    return false
                }
                if end - start > limit {
                    failure = .lineTooLong(line: lineIndex + 1, limit: limit)
                    return false
                }
                var record = classify(buffer, start, end)
                if !sawHeader {
                    if record.kind == .blank {
                        records.append(record)
                        return true
                    }
                    guard buffer.matches("#EXTM3U", at: record.trimmedStart, end: record.trimmedEnd) else {
                        failure = .missingHeader(line: lineIndex + 1)
                        return false
                    }
                    sawHeader = true
                }
                record.firstPlace = Int32(places.count)
                if record.kind == .uri {
                    places.append(URIPlace(start: record.trimmedStart, end: record.trimmedEnd, line: Int32(lineIndex)))
                } else if record.kind == .tag, record.tag.hasAttributeList {
                    if let error = scanAttributes(
                        buffer, &record, line: lineIndex, spans: &spans, places: &places, definitions: &definitions)
                    {
                        failure = error
                        return false
                    }
                }
                record.placeCount = Int32(places.count) - record.firstPlace
                records.append(record)
                return true
            }
            if failure == nil, !sawHeader { failure = .missingHeader(line: max(records.count, 1)) }
        }
        if let failure { throw failure }
        let playlist = Playlist(
            source: source, records: records, places: places, definitions: definitions,
            mayHaveVariableReference: survey.hasOpenBrace)
        try PlaylistNumberCheck.check(playlist)
        try VariableSubstitution.checkDeclared(playlist)
        return playlist
    }

    @inline(__always)
    private func classify(_ buffer: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> LineRecord {
        var trimmedStart = start
        var trimmedEnd = end
        while trimmedStart < trimmedEnd, ASCII.isBlank(buffer[trimmedStart]) { trimmedStart += 1 }
        while trimmedEnd > trimmedStart, ASCII.isBlank(buffer[trimmedEnd - 1]) { trimmedEnd -= 1 }
        var record = LineRecord(
            start: start, end: end, trimmedStart: trimmedStart, trimmedEnd: trimmedEnd,
            kind: .blank, tag: .unknown, firstPlace: 0, placeCount: 0)
        guard trimmedStart < trimmedEnd else { return record }
        guard buffer[trimmedStart] == ASCII.hash else {
            record.kind = .uri
            return record
        }
        guard buffer.matches("#EXT", at: trimmedStart, end: trimmedEnd) else {
            record.kind = .comment
            return record
        }
        record.kind = .tag
        let nameEnd = buffer.firstIndex(of: ASCII.colon, in: (trimmedStart + 1)..<trimmedEnd)
        record.tag = TagName.identify(UnsafeBufferPointer(rebasing: buffer[(trimmedStart + 1)..<nameEnd]))
        return record
    }

    /// Scans a tag's attribute list; records URI places and EXT-X-DEFINE declarations.
    private func scanAttributes(
        _ buffer: UnsafeBufferPointer<UInt8>,
        _ record: inout LineRecord,
        line: Int,
        spans: inout [AttributeSpan],
        places: inout [URIPlace],
        definitions: inout [VariableDefinition]
    ) -> PlaylistError? {
        let colon = buffer.firstIndex(of: ASCII.colon, in: record.trimmedStart..<record.trimmedEnd)
        guard colon < record.trimmedEnd else { return nil }
        spans.removeAll(keepingCapacity: true)
        let uriNames = record.tag.uriAttributes
        if let detail = AttributeScanner.scan(buffer, (colon + 1)..<record.trimmedEnd, into: &spans) {
            let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[colon..<record.trimmedEnd]), as: UTF8.self)
            if uriNames.contains(where: { text.contains($0 + "=") }) {
                return .malformedAttributeList(line: line + 1, tag: record.tag.spelling, detail: detail)
            }
            return nil
        }
        if record.tag == .define {
            if let definition = Self.definition(buffer, spans) { definitions.append(definition) }
            return nil
        }
        for name in uriNames {
            for span in spans where Self.nameEquals(buffer, span, name) {
                places.append(URIPlace(start: span.valueStart, end: span.valueEnd, line: Int32(line)))
                break
            }
        }
        if places.count - Int(record.firstPlace) > 1 {
            places[Int(record.firstPlace)...].sort { $0.start < $1.start }
        }
        return nil
    }

    private static func nameEquals(_ buffer: UnsafeBufferPointer<UInt8>, _ span: AttributeSpan, _ name: String) -> Bool
    {
        var utf8 = name.utf8.makeIterator()
        var index = span.nameStart
        while let expected = utf8.next() {
            guard index < span.nameEnd, buffer[index] == expected else { return false }
            index += 1
        }
        return index == span.nameEnd
    }

    private static func definition(
        _ buffer: UnsafeBufferPointer<UInt8>, _ spans: [AttributeSpan]
    )
        -> VariableDefinition?
    {
        func value(_ span: AttributeSpan) -> String {
            String(decoding: UnsafeBufferPointer(rebasing: buffer[span.valueStart..<span.valueEnd]), as: UTF8.self)
        }
        var name: String?
        var source: VariableDefinition.Source?
        for span in spans {
            if nameEquals(buffer, span, "NAME") {
                name = value(span)
            } else if nameEquals(buffer, span, "IMPORT") {
                name = value(span)
                source = .import
            } else if nameEquals(buffer, span, "QUERYPARAM") {
                name = value(span)
                source = .queryParameter
            }
        }
        if source == nil, let valueSpan = spans.first(where: { nameEquals(buffer, $0, "VALUE") }) {
            source = .value(value(valueSpan))
        }
        guard let name, let source else { return nil }
        return VariableDefinition(name: name, source: source)
    }
}
