import DASHManifest
import HLSPlaylist

/// An origin answer that should have been a playlist and does not parse.
public struct InvalidPlaylistError: Error, CustomStringConvertible {
    /// The origin URL.
    public let url: String
    /// Why it does not parse, with the line.
    public let error: PlaylistError

    /// Creates the error.
    /// - Parameters:
    ///   - url: the origin URL.
    ///   - error: the parse error.
    public init(url: String, error: PlaylistError) {
        self.url = url
        self.error = error
    }

    /// `origin returned an invalid playlist: <reason> (line N)`.
    public var description: String { "origin returned an invalid playlist: \(error.description)" }
}

/// An origin answer that should have been a DASH MPD and does not parse.
public struct InvalidMPDError: Error, CustomStringConvertible {
    /// The origin URL.
    public let url: String
    /// Why it does not parse, with the line.
    public let error: MPDError

    /// Creates the error.
    /// - Parameters:
    ///   - url: the origin URL.
    ///   - error: the parse error.
    public init(url: String, error: MPDError) {
        self.url = url
        self.error = error
    }

    /// `origin returned an invalid MPD: <reason> (line N)`.
    public var description: String { "origin returned an invalid MPD: \(error.description)" }
}
