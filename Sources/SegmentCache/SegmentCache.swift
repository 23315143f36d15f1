import Foundation
import Glibc
import Synchronization

/// A playlist-aware HLS object cache on disk: lookups, single-flight fills that stream while they
/// download, least-recently-used eviction, and freshness for the server's playlist policy.
///
/// ```swift
/// let cache = try SegmentCache(configuration: .init(directory: "/var/cache/hlscache", maxBytes: 10 << 30),
///                              source: originAdapter)
/// let response = try await cache.fetch(CacheKey(url: segmentURL))
/// for try await chunk in response.body { try await writer.write(chunk) }
/// ```
///
/// Put ``run()`` in the server's service group: it evicts, persists last-access times and rescans the
/// directory for other processes' entries, and closes the cache when cancelled. See the `SegmentCache`
/// article for the storage format, the fill protocol and what survives a crash.
public final class SegmentCache: Sendable {
    let configuration: Configuration
    let layout: CacheLayout
    let source: any ObjectSource
    let clock: any CacheClock
    let operations: any FileOperations
    /// Where seals that sync wait for the disk: ``DiskThreads/shared`` when `nil` (started only when a seal needs it).
    let diskThreads: DiskThreads?
    /// `nil` when the directory is not writable: every fill then passes through unstored.
    let temporaryArea: TemporaryArea?
    /// Whether another instance has shared the directory since this one opened it.
    let instanceWatch: InstanceWatch
    let counters = Counters()
    let state: Mutex<CacheState>

    /// Opens (creating if needed) the cache directory: removes temporary files left by dead processes
    /// and indexes the published entries, from the snapshot the last clean ``close()`` wrote if there is
    /// one, else from a directory scan; it reads no entry file.
    ///
    /// A directory that exists but is not writable opens in pass-through mode: published entries are
    /// served, new fills are not stored, and the problem is logged and counted as a disk error.
    /// - Parameters:
    ///   - configuration: the directory, size bound and policies.
    ///   - source: where objects that are not cached come from.
    ///   - clock: wall-clock time for expiry and last access, and the janitor's sleep.
    /// - Throws: ``CacheError`` when the directory does not exist and cannot be created.
    public convenience init(
        configuration: Configuration,
        source: any ObjectSource,
        clock: any CacheClock = SystemCacheClock()
    ) throws {
        try self.init(configuration: configuration, source: source, clock: clock, operations: PosixFileOperations())
    }

    /// Opens the cache with a given file layer (tests inject failures through it).
    /// - Parameters:
    ///   - configuration: the directory, size bound and policies.
    ///   - source: where objects that are not cached come from.
    ///   - clock: wall-clock time and sleep.
    ///   - operations: the file system calls made on entry and temporary files.
    ///   - diskThreads: where seals wait for `fdatasync`; the process's (``DiskThreads/shared``) when `nil`.
    /// - Throws: ``CacheError`` when the directory does not exist and cannot be created.
    package init(
        configuration: Configuration,
        source: any ObjectSource,
        clock: any CacheClock,
        operations: any FileOperations,
        diskThreads: DiskThreads? = nil
    ) throws {
        let layout = CacheLayout(root: configuration.directory)
        do throws(SystemError) {
            try Self.createDirectory(layout.root, operations: operations)
        } catch {
            throw CacheError.disk(error)
        }
        var area: TemporaryArea?
        do throws(SystemError) {
            area = try TemporaryArea(directory: layout.temporaryDirectory, operations: operations)
        } catch {
            counters.diskErrors.increment()
            configuration.log(
                CacheLogRecord(
                    level: .warning,
                    message: "cache directory is not writable, fills will not be stored: \(error)",
                    key: nil,
                    error: .disk(error)
                ))
        }
        // Before the sweep lists the live instances and before the index is built: an instance that opens later is
        // seen by the watch, one open earlier by the sweep.
        let watch = InstanceWatch(directory: layout.temporaryDirectory, ownLockName: area?.lockName)
        let swept = TemporaryArea.sweep(directory: layout.temporaryDirectory, except: area?.instance)
        if swept.liveInstances > 0 { watch.markShared() }
        let snapshot = IndexSnapshot.consume(in: layout.root, operations: operations)
        let shared = IndexSnapshot.markShared(
            in: layout.root, othersAlive: swept.liveInstances > 0, operations: operations)
        let scanned = (shared ? nil : snapshot) ?? DirectoryScanner.scan(root: layout.root)
        self.configuration = configuration
        self.layout = layout
        self.source = source
        self.clock = clock
        self.operations = operations
        self.diskThreads = diskThreads
        self.temporaryArea = area
        self.instanceWatch = watch
        var state = CacheState(scanned: scanned)
        state.needsRescan = !shared && snapshot != nil
        self.state = Mutex(state)
        for failure in swept.failures { reportDiskError(failure, key: nil) }
        if swept.removed > 0 {
            log(.debug, "removed \(swept.removed) temporary files left by processes that ended", key: nil)
        }
    }

    /// Serves `key`: from a published entry when there is one (an entry of its URL containing its range
    /// counts), otherwise from a fill, started now or joined if one is in flight.
    ///
    /// For a miss this returns once the origin has answered; the body streams as it downloads and throws
    /// if the fill fails. The fill goes on if the caller stops reading, so the next request gets a hit.
    /// An origin answer marked not cacheable is passed through: ``CacheResponse/isStored`` is `false`.
    /// - Parameters:
    ///   - key: the object wanted.
    ///   - freshness: whether an expired entry will do.
    /// - Returns: metadata and body.
    /// - Throws: the ``ObjectSource``'s error when the origin fails before answering (every requester of the
    ///   fill gets the same error); ``CacheError`` when the cache is closed; `CancellationError`.
    public func fetch(_ key: CacheKey, freshness: Freshness = .any) async throws -> CacheResponse {
        try await fetch(key, freshness: freshness, from: lookup(key, freshness: freshness))
    }

    /// ``fetch(_:freshness:)`` from the verdict of a lookup of `key` made already
    /// (``lookup(_:freshness:start:refreshingStored:)``): a hit is the response, a fill's response is awaited, and a
    /// stored entry the lookup left alone is fetched now.
    /// - Parameters:
    ///   - key: the object wanted.
    ///   - freshness: whether an expired entry will do.
    ///   - verdict: what the lookup decided.
    public func fetch(_ key: CacheKey, freshness: Freshness, from verdict: CacheVerdict) async throws -> CacheResponse {
        var verdict = verdict
        var attempts = 0
        while true {
            let fill: CacheFill
            switch verdict {
            case .hit(let response): return response
            case .fill(let found): fill = found
            case .stored:
                // A lookup that refreshes stored entries starts a fill: it answers .hit or .fill.
                verdict = try lookup(key, freshness: freshness)
                continue
            }
            let response = try await fill.response()
            attempts += 1
            // A fill started with another viewer's URL (their token, when tokens are left out of keys) answered
            // something not kept: a 401 or 403 for their token, any non-2xx. That is theirs alone: this request
            // asks again with its own URL (a few times at most, each joining or starting a fill of its own URL).
            guard fill.fetchesOtherURL, !response.isStored, !(200..<300).contains(response.metadata.status),
                attempts < Self.maxRefetches
            else { return response }
            counters.refetchedForOwnURL.increment()
            verdict = try lookup(key, freshness: freshness)
        }
    }

    /// How many times a request whose joined fill answered another viewer's failure asks again.
    static let maxRefetches = 3

    /// What serves `key`, decided and counted in one step: a published entry (a hit), or a fill in flight (joined)
    /// or started now (the miss). A hit is an entry of `key`'s own, or one of its URL whose bytes contain its range.
    /// - Parameters:
    ///   - key: the object wanted.
    ///   - freshness: whether an expired entry will do.
    ///   - start: how a fill this lookup starts is run.
    ///   - refreshingStored: whether an entry that does not serve at `freshness` is refreshed by a fill (or a
    ///     refresh in flight joined); `false` answers ``CacheVerdict/stored`` for it instead, starting nothing.
    ///   - hitLookedFor: the caller has just looked for a hit of `key` and found none (with `refreshingStored`
    ///     `false` only): the lookup does not look again, and an entry published since counts as stored; it decides
    ///     under one lock, with no file opened.
    /// - Throws: ``CacheError`` when the cache is closed, or past ``Configuration/maxFills`` fills in flight.
    public func lookup(
        _ key: CacheKey, freshness: Freshness = .any, start: FillStart = .task, refreshingStored: Bool = true,
        hitLookedFor: Bool = false
    ) throws(CacheError) -> CacheVerdict {
        let skipsHit = hitLookedFor && !refreshingStored
        if !skipsHit, let hit = publishedEntry(key, freshness: freshness) {
            counters.hits.increment()
            return .hit(hit)
        }
        let digest = EntryDigest(key)
        // An entry another process published (a shared directory, an index not rescanned yet) counts as stored too:
        // the caller's grace may answer from it. Without the hit's look, only the other process's part is asked
        // here; the index's is the lock's below.
        let mayBeStored = !refreshingStored && (skipsHit ? sharesDirectory() : mayHaveFile(digest))
        let decided: Decided
        do throws(CacheError) {
            decided = try withState { (state) throws(CacheError) -> Decided in
                guard !state.isClosed else { throw CacheError.closed(key: key) }
                // Before joining: a refresh in flight of an entry the caller decides about is the caller's too.
                if !refreshingStored, mayBeStored || state.needsRescan || state.index.contains(digest) {
                    return .stored
                }
                if let flight = state.flights[digest] { return .joined(flight) }
                guard state.flights.count < configuration.maxFills else {
                    throw CacheError.tooManyFills(key: key, limit: configuration.maxFills)
                }
                switch start {
                case .task: return .started(startFill(key, digest: digest, in: &state))
                case .immediate:
                    let (flight, id) = makeFlight(key, digest: digest, in: &state)
                    state.fillTasks[id] = .starting
                    return .starting(flight, id: id)
                }
            }
        } catch {
            if error.isSameKind(as: .tooManyFillsKind) { counters.fillsRefused.increment() }
            throw error
        }
        let chunkSize = configuration.readChunkSize
        switch decided {
        case .stored:
            return .stored
        case .joined(let flight):
            counters.deduplicatedFills.increment()
            return .fill(
                CacheFill(
                    flight: flight, chunkSize: chunkSize, leads: false,
                    fetchesOtherURL: flight.key.fetchURL != key.fetchURL))
        case .started(let flight):
            counters.misses.increment()
            return .fill(CacheFill(flight: flight, chunkSize: chunkSize, leads: true, fetchesOtherURL: false))
        case .starting(let flight, let id):
            counters.misses.increment()
            guard case .immediate(let executorPreference) = start else { preconditionFailure("started at once") }
            // The lookup found no entry of the key when it was told not to refresh one: the fill need not look.
            startImmediately(flight, id: id, checkStore: refreshingStored, executorPreference: executorPreference)
            return .fill(CacheFill(flight: flight, chunkSize: chunkSize, leads: true, fetchesOtherURL: false))
        }
    }

    /// What the lock decided for a lookup that found no hit.
    private enum Decided {
        case stored
        case joined(Flight)
        case started(Flight)
        case starting(Flight, id: UInt64)
    }

    /// Creates the flight of `key` and starts the task that fills it; called under the state lock, with no flight of
    /// `key` in `state`.
    func startFill(_ key: CacheKey, digest: EntryDigest, in state: inout CacheState) -> Flight {
        let (flight, id) = makeFlight(key, digest: digest, in: &state)
        state.fillTasks[id] = .running(Task { [self] in await runFill(flight, id: id) })
        return flight
    }

    /// Creates the flight of `key` and numbers its fill; called under the state lock, with no flight of `key`.
    func makeFlight(_ key: CacheKey, digest: EntryDigest, in state: inout CacheState) -> (Flight, UInt64) {
        let flight = Flight(key: key, digest: digest) { [self] error in reportDiskError(error, key: key) }
        state.flights[digest] = flight
        let id = state.nextFillID
        state.nextFillID += 1
        return (flight, id)
    }

    /// The body of fill task `id`: the fill, then its task's removal from the state.
    func runFill(_ flight: Flight, id: UInt64, checkStore: Bool = true) async {
        await fill(flight, checkStore: checkStore)
        withState { state in
            state.fillTasks[id] = nil
        }
    }

    /// The most entries a cache keeps open for hits, each holding a descriptor (for the server's descriptor budget).
    package static let openEntryCapacity = CacheState.openEntryCapacity

    /// Runs `body` on the shared state under its lock, then closes the open entries it let go, outside the lock.
    /// Every access to the state goes through it.
    func withState<Result: Sendable, Failure: Error>(
        _ body: (inout CacheState) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let (result, released) = try state.withLock { (state) throws(Failure) -> (Result, [StoredEntry]) in
            let result = try body(&state)
            return (result, state.takeReleased())
        }
        withExtendedLifetime(released) {}
        return result
    }

    /// The cache's counters, and the entries and bytes this process knows of.
    public var statistics: Statistics {
        let (entries, bytes, fills) = withState { ($0.index.count, $0.index.totalBytes, $0.flights.count) }
        return counters.snapshot(entries: entries, bytes: bytes, fillsInFlight: fills)
    }

    // MARK: Reporting

    func reportDiskError(_ error: SystemError, key: CacheKey?) {
        counters.diskErrors.increment()
        if isReportedDiskFull(error) { return }
        let cacheError = CacheError.disk(error)
        configuration.log(CacheLogRecord(level: .warning, message: cacheError.description, key: key, error: cacheError))
    }

    func log(_ level: CacheLogRecord.Level, _ message: @autoclosure () -> String, key: CacheKey?) {
        configuration.log(CacheLogRecord(level: level, message: message(), key: key, error: nil))
    }

    var nowMilliseconds: Int64 { clock.now().millisecondsSince1970 }

    /// `mkdir -p`.
    private static func createDirectory(_ path: String, operations: any FileOperations) throws(SystemError) {
        var info = stat()
        if stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR { return }
        let parent = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !parent.isEmpty && parent != path { try createDirectory(parent, operations: operations) }
        try operations.makeDirectory(path)
    }
}
