import HLSPlaylist

/// The walk's state at one moment, as a store needs it to write playlists.
struct PrefetchSnapshot: Sendable {
    /// The entry multivariant playlist and what was chosen from it.
    struct Multivariant: Sendable {
        var playlist: Playlist
        var selection: StreamSelection
    }

    /// The URL the entry playlist was fetched from.
    var entryURL: String
    /// The entry, when it is a multivariant playlist.
    var multivariant: Multivariant?
    /// Every media playlist being prefetched, in the order they were first fetched.
    var recordings: [MediaRecording]
    /// Objects queued or being fetched.
    var pending: Set<PrefetchObject>
}
