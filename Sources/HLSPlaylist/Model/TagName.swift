import Foundation

/// The tags of RFC 8216 and draft-pantos-hls-rfc8216bis that the model types, plus `unknown`.
public enum TagName: UInt8, Sendable, Hashable, CaseIterable {
    case extm3u, extinf, targetDuration, mediaSequence, discontinuitySequence, playlistType, endList
    case iFramesOnly, independentSegments, start, define, version, byteRange, discontinuity, key, map
    case programDateTime, dateRange, gap, bitrate, part, partInf, serverControl, preloadHint
    case renditionReport, skip, media, streamInf, iFrameStreamInf, sessionData, sessionKey, contentSteering
    /// Any tag starting with `#EXT` that is not listed above; kept verbatim.
    case unknown

    /// The tag as written in a playlist, without the leading `#` (`EXT-X-KEY`); empty for ``unknown``.
    public var spelling: String { TagName.spellings[Int(rawValue)] }

    /// The names of the attributes of this tag that hold a URI to rewrite, in the order they are looked for.
    public var uriAttributes: [String] {
        switch self {
        case .key, .sessionKey, .map, .media, .iFrameStreamInf, .sessionData, .part, .preloadHint, .renditionReport:
            return ["URI"]
        case .contentSteering: return ["SERVER-URI"]
        case .dateRange: return ["X-ASSET-URI", "X-ASSET-LIST"]
        default: return []
        }
    }

    /// Whether the value after the colon is an attribute list.
    public var hasAttributeList: Bool {
        switch self {
        case .start, .define, .key, .map, .dateRange, .part, .partInf, .serverControl, .preloadHint,
            .renditionReport, .skip, .media, .streamInf, .iFrameStreamInf, .sessionData, .sessionKey,
            .contentSteering:
            return true
        default: return false
        }
    }

    static let spellings: [String] = [
        "EXTM3U", "EXTINF", "EXT-X-TARGETDURATION", "EXT-X-MEDIA-SEQUENCE", "EXT-X-DISCONTINUITY-SEQUENCE",
        "EXT-X-PLAYLIST-TYPE", "EXT-X-ENDLIST", "EXT-X-I-FRAMES-ONLY", "EXT-X-INDEPENDENT-SEGMENTS", "EXT-X-START",
        "EXT-X-DEFINE", "EXT-X-VERSION", "EXT-X-BYTERANGE", "EXT-X-DISCONTINUITY", "EXT-X-KEY", "EXT-X-MAP",
        "EXT-X-PROGRAM-DATE-TIME", "EXT-X-DATERANGE", "EXT-X-GAP", "EXT-X-BITRATE", "EXT-X-PART", "EXT-X-PART-INF",
        "EXT-X-SERVER-CONTROL", "EXT-X-PRELOAD-HINT", "EXT-X-RENDITION-REPORT", "EXT-X-SKIP", "EXT-X-MEDIA",
        "EXT-X-STREAM-INF", "EXT-X-I-FRAME-STREAM-INF", "EXT-X-SESSION-DATA", "EXT-X-SESSION-KEY",
        "EXT-X-CONTENT-STEERING", "",
    ]

    /// Spellings as bytes, grouped by length, for matching without building strings.
    private static let byLength: [[(bytes: [UInt8], name: TagName)]] = {
        var table = [[(bytes: [UInt8], name: TagName)]](repeating: [], count: 32)
        for name in TagName.allCases where name != .unknown {
            let bytes = Array(name.spelling.utf8)
            table[bytes.count].append((bytes, name))
        }
        return table
    }()

    /// Identifies a tag from the bytes of its name (without `#`).
    static func identify(_ name: UnsafeBufferPointer<UInt8>) -> TagName {
        let count = name.count
        if count == 6, name[3] == UInt8(ascii: "I"), name[4] == UInt8(ascii: "N"), name[5] == UInt8(ascii: "F"),
            name[0] == UInt8(ascii: "E"), name[1] == UInt8(ascii: "X"), name[2] == UInt8(ascii: "T")
        {
            return .extinf
        }
        guard count < 32, let base = name.baseAddress else { return .unknown }
        for candidate in byLength[count] {
            let equal = candidate.bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, base, count) == 0 }
            if equal { return candidate.name }
        }
        return .unknown
    }
}
