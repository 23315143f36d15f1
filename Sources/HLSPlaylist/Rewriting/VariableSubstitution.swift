import Foundation
import ManifestURLs

/// EXT-X-DEFINE variable substitution (RFC 8216bis section 4.3) in URIs.
enum VariableSubstitution {
    /// Checks that every `{$NAME}` in a URI place is declared by some EXT-X-DEFINE.
    static func checkDeclared(_ playlist: Playlist) throws(PlaylistError) {
        guard playlist.hasVariableReference else { return }
        let declared = Set(playlist.definitions.map(\.name))
        for place in playlist.places {
            let mayHave = playlist.source.withUnsafeBufferPointer { mayHaveReference($0, place.start..<place.end) }
            guard mayHave else { continue }
            var failure: String?
            playlist.source.withUnsafeBufferPointer { bytes in
                forEachReference(bytes, place.start..<place.end) { name in
                    let text = String(decoding: bytes[name], as: UTF8.self)
                    if !declared.contains(text) { failure = text }
                }
            }
            if let failure { throw .undefinedVariable(line: Int(place.line) + 1, name: failure) }
        }
    }

    /// The values of the playlist's variables that can be known: NAME/VALUE pairs, QUERYPARAM values present in
    /// the playlist URL's query (taken verbatim), and IMPORTs that `imports` supplies.
    static func values(
        of playlist: Playlist, query: String?, imports: [String: String]
    ) -> [String: [UInt8]] {
        var values: [String: [UInt8]] = [:]
        let parameters = queryParameters(query)
        for definition in playlist.definitions {
            switch definition.source {
            case .value(let value): values[definition.name] = Array(value.utf8)
            case .import: if let value = imports[definition.name] { values[definition.name] = Array(value.utf8) }
            case .queryParameter:
                if let value = parameters[definition.name] { values[definition.name] = Array(value.utf8) }
            }
        }
        return values
    }

    /// The variables a multivariant playlist makes available to IMPORT in its media playlists.
    static func exported(by playlist: Playlist, query: String?) -> [String: String] {
        values(of: playlist, query: query, imports: [:]).mapValues { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether the range holds a variable reference at all.
    @inline(__always)
    static func mayHaveReference(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        var index = range.lowerBound
        while index + 1 < range.upperBound {
            if bytes[index] == ASCII.openBrace, bytes[index + 1] == ASCII.dollar { return true }
            index += 1
        }
        return false
    }

    /// How a substitution went.
    enum Substitution: Equatable {
        /// Every reference had a value.
        case complete
        /// A reference has no known value (an IMPORT not supplied, a QUERYPARAM not in the URL).
        case unknownVariable
        /// The result would be longer than the limit: it was not completed.
        case tooLong
    }

    /// Appends the range with its references replaced, stopping before the appended bytes exceed `limit`.
    static func substitute(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, values: [String: [UInt8]],
        into output: inout ByteWriter, limit: Int
    ) -> Substitution {
        let start = output.count
        var cursor = range.lowerBound
        var result = Substitution.complete
        forEachReference(bytes, range) { name in
            guard result != .tooLong else { return }
            guard let value = values[String(decoding: bytes[name], as: UTF8.self)] else {
                if result == .complete { result = .unknownVariable }
                return
            }
            let literal = cursor..<(name.lowerBound - 2)
            guard output.count - start + literal.count + value.count <= limit else {
                result = .tooLong
                return
            }
            output.append(bytes, literal)
            output.append(value)
            cursor = name.upperBound + 1
        }
        guard result != .tooLong, output.count - start + (range.upperBound - cursor) <= limit else { return .tooLong }
        output.append(bytes, cursor..<range.upperBound)
        return result
    }

    /// Calls `body` with the name range of each `{$NAME}` reference in order.
    private static func forEachReference(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ body: (Range<Int>) -> Void
    ) {
        var index = range.lowerBound
        while index + 2 < range.upperBound {
            if bytes[index] == ASCII.openBrace, bytes[index + 1] == ASCII.dollar {
                var end = index + 2
                while end < range.upperBound, ASCII.isNameByte(bytes[end]) { end += 1 }
                if end < range.upperBound, end > index + 2, bytes[end] == ASCII.closeBrace {
                    body((index + 2)..<end)
                    index = end + 1
                    continue
                }
            }
            index += 1
        }
    }

    private static func queryParameters(_ query: String?) -> [String: String] {
        guard let query else { return [:] }
        var result: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            if result[name] == nil { result[name] = parts.count > 1 ? String(parts[1]) : "" }
        }
        return result
    }
}

extension UnsafeBufferPointer where Element == UInt8 {
    /// Whether `{$` occurs anywhere: without it, no variable work is needed.
    func containsVariableReference() -> Bool {
        guard let base = baseAddress, count > 1 else { return false }
        var offset = 0
        while offset < count - 1, let found = memchr(base + offset, Int32(UInt8(ascii: "{")), count - 1 - offset) {
            let index = UnsafeRawPointer(found) - UnsafeRawPointer(base)
            if base[index + 1] == UInt8(ascii: "$") { return true }
            offset = index + 1
        }
        return false
    }
}
