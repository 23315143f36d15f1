import ByteRanges
import HLSPlaylist

/// An object a media playlist needs: a segment, an initialization section or a key, with its byte range.
public struct PrefetchObject: Sendable, Hashable {
    /// What the object is to the player.
    public enum Kind: String, Sendable, Hashable {
        /// A media segment.
        case segment
        /// An initialization section (EXT-X-MAP).
        case initSection
        /// A decryption key (EXT-X-KEY).
        case key
        /// A whole file a DASH MPD names, kept under its URL's own path (so that templates still name it).
        case dashFile
    }

    /// The absolute URL.
    public let url: String
    /// The bytes of `url` meant, offset explicit; `nil` for the whole resource.
    public let range: ByteRange?
    /// What the object is.
    public let kind: Kind

    /// Creates an object.
    public init(url: String, range: ByteRange?, kind: Kind) {
        self.url = url
        self.range = range
        self.kind = kind
    }

    /// The range as `offset+length`, for logs; empty for a whole resource.
    var rangeText: String {
        range.map { "@\($0)" } ?? ""
    }

    /// The URL and range, for messages.
    var label: String { url + rangeText }
}
