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
