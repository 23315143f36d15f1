/// Content types by file extension, for origins that send none.
public enum MediaTypes {
    private static let byExtension: [String: String] = [
        "ts": "video/mp2t", "m4s": "video/mp4", "mp4": "video/mp4", "m4v": "video/mp4", "cmfv": "video/mp4",
        "m4a": "audio/mp4", "cmfa": "audio/mp4", "aac": "audio/aac", "mp3": "audio/mpeg", "ac3": "audio/ac3",
        "ec3": "audio/eac3", "vtt": "text/vtt", "webvtt": "text/vtt", "key": "application/octet-stream",
        "m3u8": "application/vnd.apple.mpegurl", "m3u": "application/vnd.apple.mpegurl",
        "json": "application/json", "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png",
    ]

    /// The extension of a URL's path, lower-cased, without query or fragment.
    /// - Parameter url: the URL.
    /// - Returns: the extension, or an empty string.
    public static func pathExtension(of url: String) -> String {
        // Byte by byte: this runs for every request, hits included.
        let bytes = url.utf8
        let end = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        let path = bytes[..<end]
        guard let dot = path.lastIndex(of: UInt8(ascii: ".")) else { return "" }
        let suffix = path[path.index(after: dot)...]
        guard !suffix.contains(UInt8(ascii: "/")) else { return "" }
        return String(decoding: suffix.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// The content type a URL's extension implies, or `nil`.
    /// - Parameter url: the URL.
    /// - Returns: the content type.
    public static func byExtension(of url: String) -> String? {
        byExtension[pathExtension(of: url)]
    }
}
