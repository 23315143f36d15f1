import DASHManifest
import SegmentCache

/// What an origin object is, decided once, when it is filled, and stored with its entry
/// (``SegmentCache/EntryMetadata/kind``): every later reader asks the entry instead of comparing content types.
///
/// The one rule for "this is a manifest" (an HLS playlist or a DASH MPD) is ``classify(url:contentType:firstBytes:)``.
public enum ObjectKind: UInt8, Sendable, CaseIterable {
    /// Not said: an entry written before kinds were stored (read by its content type), or an unclassified object.
    case unknown = 0
    /// An HLS playlist (multivariant or media), stored as the origin sent it, served rewritten.
    case hlsPlaylist = 1
    /// A media segment, partial segment or initialization section (audio, video, subtitles).
    case media = 2
    /// A decryption key.
    case key = 3
    /// Anything else (images, JSON, session data).
    case other = 4
    /// An MPEG-DASH MPD, stored as the origin sent it, served rewritten.
    case dashManifest = 5

    /// The `Content-Type` the kind is stored and served with when it has one of its own.
    public var contentType: String? {
        switch self {
        case .hlsPlaylist: "application/vnd.apple.mpegurl"
        case .dashManifest: MPDManifest.contentType
        default: nil
        }
    }

    /// Whether the object is a manifest: read whole, parsed, given a freshness of its own and served rewritten.
    public var isManifest: Bool { self == .hlsPlaylist || self == .dashManifest }

    /// What an origin answer is: a playlist by a `mpegurl` type, a `.m3u8`/`.m3u` path or an `#EXTM3U` first line;
    /// an MPD by a `dash+xml` type, a `.mpd` path or an `<MPD` root element; otherwise media, key or other by its
    /// type and extension. The first bytes are not looked at when a media type comes with a media extension
    /// (`video/mp2t` for `.ts`): such an answer is media whatever it starts with.
    /// - Parameters:
    ///   - url: the origin URL.
    ///   - contentType: the origin's `Content-Type`, if any.
    ///   - firstBytes: the start of the body (a BOM is skipped).
    /// - Returns: the kind.
    public static func classify(url: String, contentType: String?, firstBytes: [UInt8]) -> ObjectKind {
        if let kind = classify(url: url, contentType: contentType) { return kind }
        var bytes = firstBytes[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        if bytes.starts(with: Array("#EXTM3U".utf8)) { return .hlsPlaylist }
        if isMediaType(contentType?.lowercased()) { return .media }
        // Sniffed after the media types, so that no segment fill scans its first chunk for an XML root.
        if MPDManifest.looksLikeMPD(firstBytes) { return .dashManifest }
        return kind(ofExtension: MediaTypes.pathExtension(of: url))
    }

    /// What the head of an origin answer alone says it is (its `Content-Type` and path; see
    /// ``classify(url:contentType:firstBytes:)``), or `nil` when the first bytes of its body may change that (a
    /// playlist sent as `text/plain`, or as `video/MP2T` from a path without a media extension). A fill announces an
    /// answer the head classifies without waiting for its body.
    /// - Parameters:
    ///   - url: the origin URL.
    ///   - contentType: the origin's `Content-Type`, if any.
    /// - Returns: the kind, or `nil`.
    public static func classify(url: String, contentType: String?) -> ObjectKind? {
        let type = contentType?.lowercased()
        if let type, type.containsBytes(of: "mpegurl") { return .hlsPlaylist }
        if let type, type.containsBytes(of: "dash+xml") { return .dashManifest }
        let pathExtension = MediaTypes.pathExtension(of: url)
        if pathExtension == "m3u8" || pathExtension == "m3u" { return .hlsPlaylist }
        if pathExtension == "mpd" { return .dashManifest }
        if isMediaType(type), kind(ofExtension: pathExtension) == .media { return .media }
        return nil
    }

    /// Whether a lowercased `Content-Type` is an audio, video or WebVTT type.
    private static func isMediaType(_ type: String?) -> Bool {
        guard let type else { return false }
        return type.hasPrefix("video/") || type.hasPrefix("audio/") || type.hasPrefix("text/vtt")
    }

    /// The kind a URL's extension suggests, before anything is fetched (for metrics of failed requests).
    /// - Parameter url: the origin URL.
    /// - Returns: the kind, `.other` when the extension says nothing.
    public static func guess(url: String) -> ObjectKind {
        let pathExtension = MediaTypes.pathExtension(of: url)
        if pathExtension == "m3u8" || pathExtension == "m3u" { return .hlsPlaylist }
        if pathExtension == "mpd" { return .dashManifest }
        return kind(ofExtension: pathExtension)
    }

    private static func kind(ofExtension pathExtension: String) -> ObjectKind {
        switch pathExtension {
        case "key": .key
        case "ts", "m4s", "mp4", "m4v", "m4a", "aac", "mp3", "ac3", "ec3", "vtt", "webvtt", "cmfv", "cmfa": .media
        default: .other
        }
    }
}

extension EntryMetadata {
    /// What the entry is: the kind stored with it, or, for an entry written before kinds were stored, what its
    /// content type and URL say.
    public var objectKind: ObjectKind {
        if let stored = ObjectKind(rawValue: kind), stored != .unknown { return stored }
        if contentType == ObjectKind.hlsPlaylist.contentType { return .hlsPlaylist }
        if contentType == ObjectKind.dashManifest.contentType { return .dashManifest }
        return ObjectKind.classify(url: key.url, contentType: contentType, firstBytes: [])
    }
}
