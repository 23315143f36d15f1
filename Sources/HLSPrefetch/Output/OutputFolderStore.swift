import ByteRanges
import DASHManifest
import HLSPlaylist
import ManifestURLs
import OriginClient

/// Prefetches into a self-contained folder (`--output DIR`): objects under `media/`, playlists rewritten to
/// relative paths, the entry at `index.m3u8`. A rerun keeps every complete file and fetches the rest.
struct OutputFolderStore: PrefetchStore {
    let files: OutputFiles
    let fetcher: HTTPFetcher

    func entryURL(for originURL: String) -> String { originURL }

    func playlist(_ url: String, fresh: Bool) async throws -> [UInt8] {
        try await fetcher.playlist(url)
    }

    func isStored(_ object: PrefetchObject) -> Bool {
        files.size(of: OutputLayout.path(of: object)) != nil
    }

    func store(_ object: PrefetchObject) async throws -> StoreOutcome {
        let path = OutputLayout.path(of: object)
        if let size = files.size(of: path) { return .present(bytes: size) }
        let response = try await fetcher.get(object.url, range: object.range)
        // An origin that ignores Range answers 200 with the whole resource: keep only the range.
        var skip: Int64 = 0
        var limit: Int64? = nil
        if let range = object.range {
            limit = range.length
            if response.status == 200 { skip = range.offset }
        }
        var file = try files.makePartial(for: path)
        do {
            for try await chunk in response.body {
                var slice = chunk[...]
                if skip > 0 {
                    let dropped = min(Int64(slice.count), skip)
                    slice = slice.dropFirst(Int(dropped))
                    skip -= dropped
                }
                if let limit {
                    slice = slice.prefix(Int(max(0, limit - file.written)))
                }
                if !slice.isEmpty { try file.write(slice) }
                if let limit, file.written >= limit { break }
            }
            if let limit, file.written != limit {
                throw FailedFetch(
                    status: nil, description: "\(object.label): got \(file.written) of \(limit) bytes")
            }
            try file.publish()
        } catch {
            file.discard()
            if error is FailedFetch || error is OutputFileError { throw error }
            throw FailedFetch(error)
        }
        return .fetched(bytes: file.written)
    }

    func publish(_ snapshot: PrefetchSnapshot, final: Bool) throws {
        let isPending: (PrefetchObject) -> Bool = { snapshot.pending.contains($0) }
        for recording in snapshot.recordings {
            let text = OutputPlaylists.media(recording, isStored: isStored, isPending: isPending, final: final)
            let path =
                recording.url == snapshot.entryURL
                ? OutputLayout.entryPlaylist : OutputLayout.path(ofPlaylist: recording.url)
            try files.write(text, to: path)
        }
        if let multivariant = snapshot.multivariant {
            let text = try OutputPlaylists.multivariant(
                multivariant.playlist, url: snapshot.entryURL, selection: multivariant.selection)
            try files.write(text, to: OutputLayout.entryPlaylist)
        }
    }

    func writeMPD(_ bytes: [UInt8], rewrittenFrom url: String) throws {
        let local = URIMapping.custom { OutputLayout.dashPath($0) }
        let rewritten = try MPDManifest.rewrite(bytes, url: url, mapping: local).bytes
        try files.write(String(decoding: rewritten, as: UTF8.self), to: OutputLayout.entryMPD)
    }

    func close() async {
        files.removePartialFolder()
        fetcher.client.shutdown()
    }
}
