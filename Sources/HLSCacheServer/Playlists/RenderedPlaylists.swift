import Foundation
import Glibc
import NIOCore
import SegmentCache
import Synchronization

/// A playlist as served: rewritten bytes and what the server needs to know about it, computed once per
/// origin version.
struct RenderedPlaylist: Sendable {
    /// The rewritten playlist, shared by every response that sends it.
    var body: RenderedBody
    /// Whether it is a live media playlist.
    var isLive: Bool
    /// Whether it is a multivariant playlist.
    var isMultivariant: Bool
    /// Its target duration, seconds.
    var targetDuration: Int?
    /// The keys of its newest segments, as many as live read-ahead fetches (media playlists).
    var newestSegments: [CacheKey]

    /// What the rendering costs the memory tier.
    var memoryCost: Int {
        let body: Int
        switch self.body {
        case .memory(let buffer): body = buffer.readableBytes
        case .file: body = 256
        }
        return body + newestSegments.count * 64
    }
}

/// Where a rewritten playlist's bytes are.
enum RenderedBody: Sendable {
    /// In one buffer shared by every response.
    case memory(ByteBuffer)
    /// In a file of the cache directory's `rendered/` folder: a rendering too large for the memory tier.
    case file(RenderedFile)

    /// The body's length in bytes.
    var length: Int {
        switch self {
        case .memory(let buffer): buffer.readableBytes
        case .file(let file): file.length
        }
    }
}

/// A rendering written to disk; the file is removed when the last reference to it goes (an answer still sending it
/// holds its own open descriptor, so removal never cuts a response short).
final class RenderedFile: Sendable {
    /// The file's path: `<cache>/rendered/<n>.m3u8`, named by a counter, never by request input.
    let path: String
    /// Its length in bytes.
    let length: Int

    init(path: String, length: Int) {
        self.path = path
        self.length = length
    }

    deinit { unlink(path) }
}

/// The in-memory tier for rewritten playlists: keyed by cache key and the origin version (`fetchedAt`), so a
/// refreshed playlist is rendered again and a hit costs no parse and no rewrite. Bounded by bytes; the oldest
/// renderings go first. A rendering larger than a quarter of the tier is written to a file next to the cache's
/// entries instead (at most ``maxFiles`` of them), so a large playlist is still rendered once per version, never
/// once per hit.
final class RenderedPlaylists: Sendable {
    private struct Entry {
        var fetchedAt: Date
        var playlist: RenderedPlaylist
    }

    private struct State {
        var entries: [CacheKey: Entry] = [:]
        var order: [CacheKey] = []
        var bytes = 0
        var files = 0
        var nextFile = 0
    }

    /// The most renderings kept on disk at once.
    static let maxFiles = 8

    private let maxBytes: Int
    private let directory: String?
    private let state = Mutex(State())

    /// - Parameters:
    ///   - maxBytes: the tier's memory bound.
    ///   - cacheDirectory: the cache directory, whose `rendered/<pid>` folder holds this process's renderings too
    ///     large for memory (folders of processes no longer running are removed: renderings are derived data), or
    ///     `nil` to keep only what fits in memory.
    init(maxBytes: Int, cacheDirectory: String?) {
        self.maxBytes = maxBytes
        var usable: String?
        if let cacheDirectory {
            let parent = cacheDirectory + "/rendered"
            let files = FileManager.default
            for name in (try? files.contentsOfDirectory(atPath: parent)) ?? [] {
                if let pid = Int32(name), pid > 0, kill(pid, 0) == 0 || errno != ESRCH { continue }
                try? files.removeItem(atPath: parent + "/" + name)
            }
            let own = "\(parent)/\(getpid())"
            try? files.removeItem(atPath: own)
            if (try? files.createDirectory(atPath: own, withIntermediateDirectories: true)) != nil { usable = own }
        }
        self.directory = usable
    }

    /// The largest rendering kept in memory.
    var maxInMemoryBytes: Int { maxBytes / 4 }

    /// A body for `bytes`: a shared buffer when it fits in memory, else a file (or a buffer when no file can be
    /// written).
    func body(for bytes: UnsafeBufferPointer<UInt8>) -> RenderedBody {
        guard bytes.count > maxInMemoryBytes, let directory else { return .memory(ByteBuffer(bytes: bytes)) }
        let number = state.withLock { state in
            state.nextFile += 1
            return state.nextFile
        }
        let path = "\(directory)/\(number).m3u8"
        guard Self.write(bytes, to: path) else {
            unlink(path)
            return .memory(ByteBuffer(bytes: bytes))
        }
        return .file(RenderedFile(path: path, length: bytes.count))
    }

    /// The rendering of `key` made from the version fetched at `fetchedAt`, if there is one.
    func rendering(of key: CacheKey, fetchedAt: Date) -> RenderedPlaylist? {
        state.withLock { state in
            guard let entry = state.entries[key], entry.fetchedAt == fetchedAt else { return nil }
            return entry.playlist
        }
    }

    /// Keeps a rendering, replacing older ones of the same key.
    func keep(_ playlist: RenderedPlaylist, of key: CacheKey, fetchedAt: Date) {
        let size = playlist.memoryCost
        guard size <= maxInMemoryBytes else { return }
        let isFile = Self.isFile(playlist)
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) {
                Self.forget(old, in: &state)
                state.order.removeAll { $0 == key }
            }
            state.entries[key] = Entry(fetchedAt: fetchedAt, playlist: playlist)
            state.order.append(key)
            state.bytes += size
            if isFile { state.files += 1 }
            while state.bytes > maxBytes || state.files > Self.maxFiles, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                if let entry = state.entries.removeValue(forKey: oldest) { Self.forget(entry, in: &state) }
            }
        }
    }

    private static func write(_ bytes: UnsafeBufferPointer<UInt8>, to path: String) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var done = 0
        while done < bytes.count {
            let count = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            done += count
        }
        return true
    }

    private static func forget(_ entry: Entry, in state: inout State) {
        state.bytes -= entry.playlist.memoryCost
        if isFile(entry.playlist) { state.files -= 1 }
    }

    private static func isFile(_ playlist: RenderedPlaylist) -> Bool {
        if case .file = playlist.body { return true }
        return false
    }
}
