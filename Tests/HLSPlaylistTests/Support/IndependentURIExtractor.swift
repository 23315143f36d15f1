import Foundation

/// A small URI-place extractor written for the tests only, independent of the parser under test:
/// it works on `String`/`Character`s, with its own line splitting and attribute tokenizer.
enum IndependentURIExtractor {
    /// A URI found on a line: the text before it, the URI, and the text after it.
    struct Place: Equatable {
        var prefix: String
        var uri: String
        var suffix: String
    }

    /// The lines of a playlist: a BOM dropped, split at CRLF, LF or CR, no empty line after a final terminator.
    static func lines(_ bytes: [UInt8]) -> [String] {
        var body = bytes
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body.removeFirst(3) }
        var lines: [String] = []
        var current: [UInt8] = []
        var index = 0
        while index < body.count {
            let byte = body[index]
            if byte == 10 || byte == 13 {
                lines.append(String(decoding: current, as: UTF8.self))
                current = []
                if byte == 13, index + 1 < body.count, body[index + 1] == 10 { index += 1 }
            } else {
                current.append(byte)
            }
            index += 1
        }
        if !current.isEmpty { lines.append(String(decoding: current, as: UTF8.self)) }
        return lines
    }

    static let uriAttributes: [String: [String]] = [
        "EXT-X-KEY": ["URI"], "EXT-X-SESSION-KEY": ["URI"], "EXT-X-MAP": ["URI"], "EXT-X-MEDIA": ["URI"],
        "EXT-X-I-FRAME-STREAM-INF": ["URI"], "EXT-X-SESSION-DATA": ["URI"], "EXT-X-PART": ["URI"],
        "EXT-X-PRELOAD-HINT": ["URI"], "EXT-X-RENDITION-REPORT": ["URI"], "EXT-X-CONTENT-STEERING": ["SERVER-URI"],
        "EXT-X-DATERANGE": ["X-ASSET-URI", "X-ASSET-LIST"],
    ]

    /// The URI places of one line.
    static func places(in line: String) -> [Place] {
        let trimmed = line.trimmingCharacters(in: [" ", "\t"])
        if trimmed.isEmpty { return [] }
        if !trimmed.hasPrefix("#") {
            let leading = String(line.prefix { $0 == " " || $0 == "\t" })
            let trailing = String(String(line.reversed()).prefix { $0 == " " || $0 == "\t" }.reversed())
            return [Place(prefix: leading, uri: trimmed, suffix: trailing)]
        }
        guard trimmed.hasPrefix("#EXT"), let colon = line.firstIndex(of: ":") else { return [] }
        let name = line[line.index(after: line.firstIndex(of: "#")!)..<colon]
        guard let wanted = uriAttributes[String(name)] else { return [] }
        var found: [Place] = []
        for (attribute, valueRange) in tokenize(line, from: line.index(after: colon)) where wanted.contains(attribute) {
            found.append(
                Place(
                    prefix: String(line[..<valueRange.lowerBound]), uri: String(line[valueRange]),
                    suffix: String(line[valueRange.upperBound...])))
        }
        // Only the first occurrence of each attribute name counts.
        var seen: Set<String> = []
        return found.filter { place in
            let name = wanted.first { place.prefix.hasSuffix($0 + "=\"") || place.prefix.hasSuffix($0 + "=") } ?? ""
            return seen.insert(name).inserted
        }
    }

    /// `NAME=VALUE` pairs, with the range of each value (inside quotes for quoted ones).
    private static func tokenize(_ line: String, from start: String.Index) -> [(String, Range<String.Index>)] {
        var result: [(String, Range<String.Index>)] = []
        var index = start
        while index < line.endIndex {
            while index < line.endIndex, line[index] == " " || line[index] == "," { index = line.index(after: index) }
            guard let equals = line[index...].firstIndex(of: "=") else { break }
            let name = line[index..<equals].trimmingCharacters(in: [" "])
            var valueStart = line.index(after: equals)
            if valueStart < line.endIndex, line[valueStart] == "\"" {
                valueStart = line.index(after: valueStart)
                guard let close = line[valueStart...].firstIndex(of: "\"") else { break }
                result.append((name, valueStart..<close))
                index = line.index(after: close)
            } else {
                let end = line[valueStart...].firstIndex(of: ",") ?? line.endIndex
                var valueEnd = end
                while valueEnd > valueStart, line[line.index(before: valueEnd)] == " " {
                    valueEnd = line.index(before: valueEnd)
                }
                result.append((name, valueStart..<valueEnd))
                index = end
            }
        }
        return result
    }

    /// Whether a URI has a scheme other than http or https (such places stay untouched).
    static func hasOtherScheme(_ uri: String) -> Bool {
        guard let colon = uri.firstIndex(of: ":") else { return false }
        let scheme = uri[..<colon]
        guard let first = scheme.first, first.isLetter,
            scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." })
        else { return false }
        let lower = scheme.lowercased()
        if lower == "http" || lower == "https" {
            return false
        }
        return true
    }
}
