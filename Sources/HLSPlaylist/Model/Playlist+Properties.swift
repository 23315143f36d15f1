extension Playlist {
    /// Every tag line's typed tag with its 0-based line index, in order.
    public var tags: [(line: Int, tag: Tag)] {
        records.indices.compactMap { index in
            records[index].kind == .tag ? (index, lines[index].tag!) : nil
        }
    }

    /// The first tag of a kind, decoded.
    private func first(_ name: TagName) -> Tag? {
        guard let index = records.firstIndex(where: { $0.kind == .tag && $0.tag == name }) else { return nil }
        return lines[index].tag
    }

    /// EXT-X-TARGETDURATION, seconds.
    public var targetDuration: Int? {
        if case .targetDuration(let seconds)? = first(.targetDuration) { return seconds }
        return nil
    }

    /// EXT-X-MEDIA-SEQUENCE (0 when absent).
    public var mediaSequence: Int {
        if case .mediaSequence(let number)? = first(.mediaSequence) { return number }
        return 0
    }

    /// EXT-X-PLAYLIST-TYPE.
    public var playlistType: PlaylistType? {
        if case .playlistType(let type)? = first(.playlistType) { return type }
        return nil
    }

    /// Whether EXT-X-ENDLIST is present.
    public var hasEndList: Bool { records.contains { $0.kind == .tag && $0.tag == .endList } }

    /// Whether the playlist can change: a media playlist that is neither VOD nor ended.
    public var isLive: Bool { kind == .media && playlistType != .vod && !hasEndList }

    /// EXT-X-PART-INF PART-TARGET, seconds, for low-latency playlists.
    public var partTarget: Double? {
        if case .partInf(let info)? = first(.partInf) { return info.partTarget }
        return nil
    }

    /// EXT-X-SERVER-CONTROL.
    public var serverControl: ServerControlTag? {
        if case .serverControl(let control)? = first(.serverControl) { return control }
        return nil
    }
}
