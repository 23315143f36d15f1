import HLSPlaylist

/// Which media playlists of a multivariant playlist to fetch, and which of its lines a written copy keeps.
struct StreamSelection: Sendable {
    /// The chosen media playlists' URLs, in playlist order, without duplicates.
    var mediaPlaylists: [String] = []
    /// Lines of the multivariant playlist that a written copy leaves out: unchosen variants and renditions,
    /// and tags whose URIs are not fetched (EXT-X-SESSION-KEY, -SESSION-DATA, -CONTENT-STEERING).
    var droppedLines: Set<Int> = []
    /// Whether the variants' SUBTITLES attribute must go (no subtitle rendition is kept).
    var dropsSubtitles = false

    /// Chooses from `playlist` by `options`.
    init(_ playlist: Playlist, references: [PlaylistReference], options: PrefetchOptions) {
        let variants: [(reference: PlaylistReference, info: StreamInfTag)] = references.compactMap {
            if case .variant(let info) = $0.role { return ($0, info) } else { return nil }
        }
        let chosenVariants = Set(Self.choose(variants.map(\.info), by: options.variants).map { variants[$0].reference })
        let chosenInfos = variants.filter { chosenVariants.contains($0.reference) }.map(\.info)
        let groups = (
            audio: Set(chosenInfos.compactMap(\.audio)), video: Set(chosenInfos.compactMap(\.video)),
            subtitles: Set(chosenInfos.compactMap(\.subtitles))
        )
        var defaultAudio: [String: String] = [:]  // group → the URL of its default rendition
        for reference in references {
            guard case .rendition(let media) = reference.role, media.type.uppercased() == "AUDIO" else { continue }
            if media.isDefault || defaultAudio[media.groupID] == nil { defaultAudio[media.groupID] = reference.url }
        }
        let allLines = playlist.lines
        var chosen: [String] = []
        for reference in references {
            var keep = false
            switch reference.role {
            case .variant:
                keep = chosenVariants.contains(reference)
                if !keep, let tagLine = Self.streamInfLine(before: reference.line, in: allLines) {
                    droppedLines.insert(tagLine)
                }
            case .rendition(let media):
                switch media.type.uppercased() {
                case "AUDIO":
                    keep =
                        groups.audio.contains(media.groupID)
                        && (options.audio == .all || defaultAudio[media.groupID] == reference.url)
                case "VIDEO": keep = groups.video.contains(media.groupID)
                case "SUBTITLES": keep = options.subtitles == .all && groups.subtitles.contains(media.groupID)
                default: keep = false
                }
            case .iFrameVariant: keep = options.iFrames
            default: keep = false
            }
            if keep {
                if !chosen.contains(reference.url) { chosen.append(reference.url) }
            } else {
                droppedLines.insert(reference.line)
            }
        }
        mediaPlaylists = chosen
        dropsSubtitles = options.subtitles == .none
    }

    /// The indices of the variants `selection` picks.
    static func choose(_ variants: [StreamInfTag], by selection: PrefetchOptions.VariantSelection) -> [Int] {
        guard !variants.isEmpty else { return [] }
        let byBandwidth = variants.indices.sorted { variants[$0].bandwidth < variants[$1].bandwidth }
        switch selection {
        case .all: return Array(variants.indices)
        case .best: return [byBandwidth.last!]
        case .worst: return [byBandwidth.first!]
        case .maxBandwidth(let limit):
            let fitting = variants.indices.filter { variants[$0].bandwidth <= limit }
            return fitting.isEmpty ? [byBandwidth.first!] : fitting
        }
    }

    /// The EXT-X-STREAM-INF line that a variant's URI line belongs to.
    private static func streamInfLine(before uriLine: Int, in lines: Playlist.Lines) -> Int? {
        var index = uriLine - 1
        while index >= 0 {
            if case .streamInf? = lines[index].tag { return index }
            if lines[index].kind == .uri { return nil }
            index -= 1
        }
        return nil
    }
}
