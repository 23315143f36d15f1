import Foundation
import HLSPlaylist

/// Where each object and playlist goes in an `--output` folder.
///
/// No byte of a name comes from the network unsanitised: a name is the last path segment of the URL reduced to
/// `[A-Za-z0-9._-]` (at most 48 characters, no leading dot), a `_` and 12 hex digits of a hash of the URL and
/// byte range (so two objects never share a file, and a rerun finds the same names), and an extension.
/// The entry playlist is `index.m3u8`; other playlists sit beside it; objects go in `media/`.
enum OutputLayout {
    /// The folder, relative to the output directory, that holds segments, keys and initialization sections.
    static let mediaFolder = "media"
    /// The entry playlist's name.
    static let entryPlaylist = "index.m3u8"

    /// The MPD's name in a DASH folder.
    static let entryMPD = "manifest.mpd"

    /// The relative path of an object.
    static func path(of object: PrefetchObject) -> String {
        let fallback: String
        switch object.kind {
        case .segment: fallback = "ts"
        case .initSection: fallback = "mp4"
        case .key: fallback = "key"
        case .dashFile: return dashPath(object.url)
        }
        return mediaFolder + "/" + name(url: object.url, identity: object.label, fallbackExtension: fallback)
    }

    /// The relative path of a media playlist (not the entry).
    static func path(ofPlaylist url: String) -> String {
        var name = name(url: url, identity: url, fallbackExtension: "m3u8")
        if !name.hasSuffix(".m3u8") {
            name = String(name[..<(name.lastIndex(of: ".") ?? name.endIndex)]) + ".m3u8"
        }
        return name
    }

    /// Where a DASH MPD's file goes: `media/<host>/<path>`, each character outside `[A-Za-z0-9._$%-]` (the query's
    /// `?`, `&` and `=` too) replaced by `_`, one for one, so that an MPD's template URL, written through the same
    /// function, still names every file it expands to (`$Number%05d$` is kept). No segment starts with a dot, so no
    /// path leaves the folder.
    static func dashPath(_ url: String) -> String {
        var rest = Substring(url)
        if let schemeEnd = rest.range(of: "://") { rest = rest[schemeEnd.upperBound...] }
        rest = rest.prefix { $0 != "#" }
        let segments = rest.split(separator: "/", omittingEmptySubsequences: true).map { segment -> String in
            var safe = String(
                segment.unicodeScalars.map { scalar -> Character in
                    isSafe(scalar) || scalar == "$" || scalar == "%" ? Character(scalar) : "_"
                })
            if safe.hasPrefix(".") { safe = "_" + safe.dropFirst() }
            return String(safe.prefix(200))
        }
        return ([mediaFolder] + segments).joined(separator: "/")
    }

    /// `stem_hash.ext` for a URL.
    static func name(url: String, identity: String, fallbackExtension: String) -> String {
        var path = Substring(url)
        if let schemeEnd = path.range(of: "://") { path = path[schemeEnd.upperBound...] }
        path = path.prefix { $0 != "?" && $0 != "#" }
        let last = path.split(separator: "/", omittingEmptySubsequences: true).dropFirst().last ?? ""
        var stem = Substring(last)
        var ext = fallbackExtension
        if let dot = last.lastIndex(of: "."), dot != last.startIndex {
            let candidate = last[last.index(after: dot)...]
            if (1...5).contains(candidate.count), candidate.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
                ext = candidate.lowercased()
                stem = last[..<dot]
            }
        }
        var safe = String(stem.unicodeScalars.map { Self.isSafe($0) ? Character($0) : "_" }.prefix(48))
        while safe.hasPrefix(".") { safe.removeFirst() }
        if safe.isEmpty { safe = "object" }
        return "\(safe)_\(hash(identity)).\(ext)"
    }

    /// 12 hex digits of FNV-1a 64 of `text`.
    static func hash(_ text: String) -> String {
        var value: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01b3
        }
        let hex = String(value, radix: 16)
        return String((String(repeating: "0", count: max(0, 16 - hex.count)) + hex).prefix(12))
    }

    private static func isSafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-": return true
        default: return false
        }
    }
}
