import Foundation
import Glibc
import HTTPTypes
import NIOCore
import OriginCache
import SegmentCache
import Synchronization

/// A manifest as served (an HLS playlist or a DASH MPD): rewritten bytes and what the server needs to know about
/// it, computed once per origin version. A class: every answer that sends it shares it (a hit passes one reference,
/// not a dozen fields to retain and release).
final class RenderedPlaylist: Sendable {
    /// The rewritten manifest, shared by every response that sends it.
    let body: RenderedBody
    /// The `Content-Type` it is served with.
    let contentType: String
    /// Whether it is live (a live media playlist, a dynamic MPD): refreshed every ``liveFreshSeconds``.
    let isLive: Bool
    /// Whether it is a multivariant playlist.
    let isMultivariant: Bool
    /// How long a live manifest stays fresh: half a target duration, or a dynamic MPD's update period.
    let liveFreshSeconds: Double
    /// How old an expired live manifest may be and still be served when the origin fails.
    let liveStaleLimitSeconds: Double
    /// The keys of its newest segments, as many as live read-ahead fetches (media playlists).
    let newestSegments: [CacheKey]
    /// Set by the first answer that sends this rendering, which queues the read-ahead of ``newestSegments``: once
    /// per origin version, not once per player request.
    let readAheadQueued = OnceFlag()
    /// `Content-Type`, made once (a field checks its value when made).
    let contentTypeField: HTTPField
    /// A live manifest's `Cache-Control` (the same for every answer of this rendering), made once; `nil` for others,
    /// whose remaining freshness changes.
    let liveCacheControlField: HTTPField?

    /// A rendering; see the properties.
    init(
        cmsd: CMSD? = nil, body: RenderedBody, contentType: String, isLive: Bool, isMultivariant: Bool,
        liveFreshSeconds: Double, liveStaleLimitSeconds: Double, newestSegments: [CacheKey]
    ) {
        self.body = body
        self.contentType = contentType
        self.isLive = isLive
        self.isMultivariant = isMultivariant
        self.liveFreshSeconds = liveFreshSeconds
        self.liveStaleLimitSeconds = liveStaleLimitSeconds
        self.newestSegments = newestSegments
        contentTypeField = HTTPField(name: .contentType, value: contentType)
        liveCacheControlField =
            isLive ? HTTPField(name: .cacheControl, value: "public, max-age=\(max(1, Int(liveFreshSeconds)))") : nil
        cmsdField = cmsd?.staticField(kind: .hlsPlaylist, contentType: contentType, live: isLive)
    }

    /// `CMSD-Static` of its answers (``CMSD``), when the server sends CMSD.
    let cmsdField: HTTPField?

    /// The own fields of this live rendering's fresh answers (``hitFields(lastModified:)``), made once per
    /// `Last-Modified`.
    private let madeHitFields = Mutex<(lastModified: String?, fields: MadeFields)?>(nil)

    /// The own fields of an answer that sends this live rendering fresh (a hit or a miss, not stale): `Content-Type`,
    /// `Vary: Via`, its `Cache-Control`, when the origin sent one, `Last-Modified`, and `CMSD-Static`; made once and
    /// shared.
    /// `nil` for a rendering that is not live, whose `Cache-Control` changes with its remaining freshness.
    func hitFields(lastModified: String?) -> MadeFields? {
        guard let liveCacheControlField else { return nil }
        if let made = madeHitFields.withLock({ $0 }), made.lastModified == lastModified { return made.fields }
        var fields = HTTPFields()
        fields.reserveCapacity(4)
        fields.append(contentTypeField)
        fields.append(Self.varyVia)
        fields.append(liveCacheControlField)
        if let lastModified { fields.append(HTTPField(name: .lastModified, value: lastModified)) }
        if let cmsdField { fields.append(cmsdField) }
        let made = MadeFields(fields)
        madeHitFields.withLock { $0 = (lastModified, made) }
        return made
    }

    /// `Vary: Via`: nodes that send `Via` get the manifest as stored (``ObjectHead``), and a shared cache in front
    /// keeps the two apart.
    static let varyVia = HTTPField(name: .vary, value: "Via")

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

/// A flag set once, by the first to ask.
final class OnceFlag: Sendable {
    private let done = Atomic<Bool>(false)

    /// `true` for the first caller only.
    func claim() -> Bool {
        // Read first: once claimed, a caller only reads the flag (no write to a line every thread reads).
        !done.load(ordering: .relaxed) && !done.exchange(true, ordering: .relaxed)
    }
}

/// Where a rewritten playlist's bytes are.
enum RenderedBody: Sendable {
    /// In one buffer shared by every response.
    case memory(ByteBuffer)
    /// In an unlinked file of the cache directory: a rendering too large for the memory tier.
    case file(RenderedFile)

    /// The body's length in bytes.
    var length: Int {
        switch self {
        case .memory(let buffer): buffer.readableBytes
        case .file(let file): file.length
        }
    }
}

/// A rendering written to disk and unlinked at once: only its open descriptor names it, so nothing outside the
/// process (another instance sharing the directory, an operator, a crash) can remove it from under an answer, and
/// nothing is left behind. The descriptor is closed when the last reference goes; an answer sending it holds a
/// `dup` of its own.
final class RenderedFile: Sendable {
    /// The open, unlinked file.
    let descriptor: CInt
    /// Its length in bytes.
    let length: Int

    init(descriptor: CInt, length: Int) {
        self.descriptor = descriptor
        self.length = length
    }

    deinit { close(descriptor) }
}

/// The in-memory tier for rewritten playlists: keyed by cache key and the origin version (`fetchedAt`), so a
/// refreshed playlist is rendered again and a hit costs no parse and no rewrite. Bounded by bytes; the least used
/// renderings go first. A rendering larger than a quarter of the tier is written to an unlinked file in the
/// cache's `tmp/` instead (at most ``maxFileBytes`` of them in all, the oldest going first), so a large playlist is
/// still rendered once per version, never once per hit.
final class RenderedPlaylists: Sendable {
    private struct Entry {
        var fetchedAt: Date
        var playlist: RenderedPlaylist
    }

    private struct State {
        var entries: ClockMap<CacheKey, Entry>
        /// The keys whose rendering is a file, oldest first.
        var fileKeys: [CacheKey] = []
        var nextFile = 0
        /// Who waits for a rendering of a key to be kept (``whenKept(_:_:)``), with when they stop caring.
        var waiting: [CacheKey: [(until: ContinuousClock.Instant, callback: @Sendable () -> Void)]] = [:]
    }

    /// The most keys with waiters before the ones whose waiters all stopped caring are dropped.
    private static let maxWaitingKeys = 1024

    private let maxBytes: Int
    /// The most bytes of renderings kept in files.
    let maxFileBytes: Int
    private let directory: String?
    private let state: Mutex<State>

    /// - Parameters:
    ///   - maxBytes: the tier's memory bound.
    ///   - maxFileBytes: the bound on renderings kept in files.
    ///   - cacheDirectory: the cache directory, whose `tmp/` holds renderings too large for memory while they are
    ///     written, or `nil` to keep only what fits in memory.
    init(maxBytes: Int, maxFileBytes: Int = 1 << 30, cacheDirectory: String?) {
        self.maxBytes = maxBytes
        self.maxFileBytes = maxFileBytes
        self.state = Mutex(State(entries: ClockMap(capacity: maxBytes)))
        var usable: String?
        if let cacheDirectory {
            let temporary = cacheDirectory + "/tmp"
            if (try? FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)) != nil {
                usable = temporary
            }
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
        guard let file = Self.write(bytes, to: "\(directory)/rendered-\(getpid())-\(number)") else {
            return .memory(ByteBuffer(bytes: bytes))
        }
        return .file(file)
    }

    /// The rendering of `key` made from the version fetched at `fetchedAt`, if there is one.
    func rendering(of key: CacheKey, fetchedAt: Date) -> RenderedPlaylist? {
        state.withLock { state in
            guard let entry = state.entries.value(forKey: key), entry.fetchedAt == fetchedAt else { return nil }
            return entry.playlist
        }
    }

    /// Calls `callback` (once, from the thread that keeps it) when a rendering of `key` is next kept, unless one made
    /// from the version fetched at `fetchedAt` is kept now: then `false`, and no call. A rendering that is never
    /// kept never calls: the caller gives up after `patience`, and the callback is dropped some time after that.
    /// - Parameters:
    ///   - key: the playlist's key.
    ///   - fetchedAt: the version the caller wants.
    ///   - patience: how long the caller waits.
    ///   - callback: what to do then; it must not block.
    func whenKept(
        _ key: CacheKey, fetchedAt: Date, patience: Duration, _ callback: @escaping @Sendable () -> Void
    ) -> Bool {
        let now = ContinuousClock.now
        return state.withLock { state in
            if let entry = state.entries.peek(key), entry.fetchedAt == fetchedAt { return false }
            if state.waiting.count >= Self.maxWaitingKeys {
                state.waiting = state.waiting.filter { $0.value.contains { $0.until > now } }
            }
            // Those of this key that gave up are dropped here too: each holds its connection's handler.
            state.waiting[key, default: []].removeAll { $0.until <= now }
            state.waiting[key, default: []].append((now + patience, callback))
            return true
        }
    }

    /// Keeps a rendering, replacing older ones of the same key, and calls those waiting for it (``whenKept``).
    func keep(_ playlist: RenderedPlaylist, of key: CacheKey, fetchedAt: Date) {
        let isFile = Self.isFile(playlist)
        guard isFile || playlist.body.length <= maxInMemoryBytes else { return }
        let waiting = state.withLock { state in
            state.entries.insert(
                Entry(fetchedAt: fetchedAt, playlist: playlist), forKey: key, cost: playlist.memoryCost)
            let live = state.fileKeys.filter { $0 != key && Self.isFile(state.entries.peek($0)?.playlist) }
            state.fileKeys = live
            if isFile { state.fileKeys.append(key) }
            var fileBytes = state.fileKeys.reduce(0) { $0 + (state.entries.peek($1)?.playlist.body.length ?? 0) }
            while fileBytes > maxFileBytes, state.fileKeys.count > 1 {
                let oldest = state.fileKeys.removeFirst()
                fileBytes -= state.entries.removeValue(forKey: oldest)?.playlist.body.length ?? 0
            }
            return state.waiting.removeValue(forKey: key) ?? []
        }
        for waiter in waiting { waiter.callback() }
    }

    /// Forgets the renderings whose key matches (a purge).
    /// - Returns: how many were held.
    @discardableResult
    func remove(where matches: @Sendable (CacheKey) -> Bool) -> Int {
        state.withLock { state in
            state.fileKeys.removeAll(where: matches)
            return state.entries.removeAll(where: matches)
        }
    }

    /// Writes `bytes` to a new file at `path`, unlinks it and keeps it open.
    private static func write(_ bytes: UnsafeBufferPointer<UInt8>, to path: String) -> RenderedFile? {
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        unlink(path)
        var done = 0
        while done < bytes.count {
            let count = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                close(descriptor)
                return nil
            }
            done += count
        }
        return RenderedFile(descriptor: descriptor, length: bytes.count)
    }

    private static func isFile(_ playlist: RenderedPlaylist?) -> Bool {
        if case .file? = playlist?.body { return true }
        return false
    }
}
