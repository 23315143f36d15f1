import ByteRanges
import DASHManifest
import HLSPlaylist
import ManifestURLs
import Synchronization

/// Walks a stream's playlist tree and stores every chosen segment, initialization section and key, a bounded
/// number at a time, with retries; follows live playlists until told to stop.
///
/// ```swift
/// let prefetcher = try Prefetcher(url: "https://cdn.example/master.m3u8", destination: .output(folder, client))
/// let summary = try await prefetcher.run()
/// ```
public final class Prefetcher: Sendable {
    private struct State {
        var progress = PrefetchProgress()
        var snapshot: PrefetchSnapshot
        var known: Set<PrefetchObject> = []
        var failures: [PrefetchSummary.Failure] = []
        var live = false
    }

    private let url: String
    private let options: PrefetchOptions
    private let store: any PrefetchStore
    /// Whether objects go to an output folder (whose playlists are HLS only).
    private let writesFolder: Bool
    private let state: Mutex<State>
    private let stopRequested = Atomic<Bool>(false)
    private let log: @Sendable (String) -> Void

    /// Prepares a prefetch.
    /// - Parameters:
    ///   - url: the stream's entry playlist (multivariant or media).
    ///   - destination: where objects go.
    ///   - options: what to fetch and how.
    ///   - log: receives one line per failure and retry (with the URL).
    /// - Throws: ``PrefetchError`` when the destination cannot be used.
    public init(
        url: String, destination: PrefetchDestination, options: PrefetchOptions = .init(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(PrefetchError) {
        self.url = url
        self.options = options
        self.store = try destination.makeStore()
        if case .output = destination { writesFolder = true } else { writesFolder = false }
        self.log = log
        state = Mutex(State(snapshot: PrefetchSnapshot(entryURL: url, recordings: [], pending: [])))
    }

    /// Asks the run to finish: live playlists stop being followed (what was recorded is kept and its playlist
    /// finished), objects not yet started are skipped unless a live stream is being recorded.
    /// - Returns: whether a stop had been requested already (a second interrupt).
    @discardableResult
    public func requestStop() -> Bool {
        stopRequested.exchange(true, ordering: .relaxed)
    }

    /// The counts so far.
    public var progress: PrefetchProgress {
        state.withLock { $0.progress }
    }

    /// Runs the prefetch to its end.
    /// - Returns: the summary; its ``PrefetchSummary/exitCode`` is 1 when something failed.
    /// - Throws: ``PrefetchError`` when the entry playlist cannot be fetched or parsed.
    public func run() async throws(PrefetchError) -> PrefetchSummary {
        let started = ContinuousClock.now
        let entryURL = store.entryURL(for: url)
        let entry: Playlist
        do {
            let bytes = try await withRetries(entryURL) { try await self.store.playlist(entryURL, fresh: true) }
            if MPDManifest.looksLikeMPD(Array(bytes.prefix(4096))) {
                return try await runMPD(bytes, url: entryURL, started: started)
            }
            entry = try Playlist(parsing: bytes).viewed(by: options.view)
        } catch let error as ManifestViewError {
            await store.close()
            throw PrefetchError(.view, "\(entryURL): \(error.message)")
        } catch let error as PrefetchError {
            await store.close()
            throw error
        } catch let error as PlaylistError {
            await store.close()
            throw PrefetchError(.invalidPlaylist, "invalid playlist \(entryURL): \(error)")
        } catch {
            await store.close()
            throw PrefetchError(.entryUnavailable, "cannot fetch \(entryURL): \(error)")
        }
        state.withLock {
            $0.progress.playlistFetches += 1; $0.snapshot.entryURL = entryURL
        }

        await fetchAll { queue in await self.walk(entry, url: entryURL, into: queue) }
        publish(final: true)
        await store.close()
        let (playlists, live) = state.withLock { ($0.snapshot.recordings.count, $0.live) }
        return summary(started: started, playlists: playlists, live: live)
    }

    /// Runs `options.concurrency` workers storing what `feed` enqueues, until `feed` returns and the queue is done.
    private func fetchAll(_ feed: @Sendable (AsyncStream<PrefetchObject>.Continuation) async -> Void) async {
        let (queue, continuation) = AsyncStream<PrefetchObject>.makeStream()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<max(1, options.concurrency) {
                group.addTask {
                    for await object in queue { await self.fetch(object) }
                }
            }
            await feed(continuation)
            continuation.finish()
            await group.waitForAll()
        }
    }

    /// The run's summary, from the counts so far.
    private func summary(started: ContinuousClock.Instant, playlists: Int, live: Bool) -> PrefetchSummary {
        state.withLock { state in
            let elapsed = ContinuousClock.now - started
            return PrefetchSummary(
                url: url, playlists: playlists, live: live, objects: state.progress.total,
                fetched: state.progress.fetched, alreadyPresent: state.progress.present, failed: state.progress.failed,
                skipped: state.progress.skipped, bytes: state.progress.bytes,
                seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
                failures: state.failures)
        }
    }

    // MARK: DASH

    /// Prefetches a static MPD: every object of the chosen Representations (``PrefetchOptions/variants`` applied to
    /// each AdaptationSet's Representations by bandwidth).
    /// - Throws: ``PrefetchError`` for an invalid or dynamic MPD, or an MPD into an output folder.
    private func runMPD(
        _ bytes: [UInt8], url: String, started: ContinuousClock.Instant
    ) async throws(PrefetchError)
        -> PrefetchSummary
    {
        let mpd: MPD
        do throws(MPDError) {
            // Through the view: the model of what it shows.
            mpd =
                options.view.isEmpty
                ? try MPDManifest.parse(bytes, url: url)
                : try MPDManifest.rewrite(bytes, url: url, mapping: .proxy(base: ""), view: options.view).mpd
        } catch {
            if let view = error.view { throw PrefetchError(.view, "\(url): \(view.message)") }
            throw PrefetchError(.invalidPlaylist, "invalid MPD \(url): \(error)")
        }
        guard mpd.type == .static else {
            throw PrefetchError(
                .unsupported, "\(url) is a dynamic (live) MPD: prefetch does not record DASH yet; use serve")
        }
        let chosen = Self.chosenRepresentations(mpd, variants: options.variants)
        let objects: [MPDObject]
        do throws(MPDError) {
            objects = try mpd.objects(documentURL: url) { chosen.contains($0.id) }
        } catch {
            throw PrefetchError(.invalidPlaylist, "invalid MPD \(url): \(error)")
        }
        state.withLock { $0.progress.playlistFetches += 1 }
        // An output folder keeps whole files under their own paths, so that the MPD's templates and byte ranges
        // still name them offline.
        let wanted = writesFolder ? Self.wholeFiles(objects) : objects.map(Self.prefetchObject)
        await fetchAll { queue in self.enqueue(wanted, into: queue) }
        if writesFolder {
            do {
                try store.writeMPD(bytes, rewrittenFrom: url)
            } catch {
                fail(url, "cannot write the MPD: \(error)")
            }
        }
        await store.close()
        return summary(started: started, playlists: 1, live: false)
    }

    /// The ids of the Representations `variants` chooses, AdaptationSet by AdaptationSet.
    static func chosenRepresentations(_ mpd: MPD, variants: PrefetchOptions.VariantSelection) -> Set<String> {
        var chosen: Set<String> = []
        for set in mpd.periods.flatMap(\.adaptationSets) {
            let sorted = set.representations.sorted { $0.bandwidth < $1.bandwidth }
            switch variants {
            case .all: chosen.formUnion(sorted.map(\.id))
            case .best: sorted.last.map { _ = chosen.insert($0.id) }
            case .worst: sorted.first.map { _ = chosen.insert($0.id) }
            case .maxBandwidth(let limit):
                let fitting = sorted.filter { $0.bandwidth <= limit }
                chosen.formUnion((fitting.isEmpty ? Array(sorted.prefix(1)) : fitting).map(\.id))
            }
        }
        return chosen
    }

    /// Each file the objects name, once, whole.
    private static func wholeFiles(_ objects: [MPDObject]) -> [PrefetchObject] {
        var seen: Set<String> = []
        return objects.compactMap { object in
            seen.insert(object.url).inserted ? PrefetchObject(url: object.url, range: nil, kind: .dashFile) : nil
        }
    }

    private static func prefetchObject(_ object: MPDObject) -> PrefetchObject {
        let range = object.range.flatMap { ByteRange(offset: $0.lowerBound, length: $0.upperBound - $0.lowerBound + 1) }
        return PrefetchObject(
            url: object.url, range: range, kind: object.role == .initialization ? .initSection : .segment)
    }

    // MARK: Walking

    private func walk(
        _ entry: Playlist, url entryURL: String, into queue: AsyncStream<PrefetchObject>.Continuation
    )
        async
    {
        var media: [(url: String, playlist: Playlist?)] = []
        var imports: [String: String] = [:]
        if entry.kind == .multivariant {
            let selection = StreamSelection(
                entry, references: entry.references(playlistURL: entryURL), options: options)
            state.withLock { $0.snapshot.multivariant = .init(playlist: entry, selection: selection) }
            imports = entry.exportedVariables(playlistURL: entryURL)
            media = selection.mediaPlaylists.map { ($0, nil) }
        } else {
            media = [(entryURL, entry)]
        }
        for (mediaURL, known) in media {
            let playlist: Playlist
            if let known {
                playlist = known
            } else {
                do {
                    playlist = try await fetchPlaylist(mediaURL)
                } catch {
                    fail(mediaURL, "\(error)")
                    continue
                }
            }
            var recording = MediaRecording(url: mediaURL, playlist: playlist)
            let objects = recording.record(playlist, url: mediaURL, imports: imports)
            state.withLock {
                $0.snapshot.recordings.append(recording)
                if recording.isLive { $0.live = true }
            }
            enqueue(objects, into: queue)
        }
        publish(final: false)
        await follow(imports: imports, into: queue)
    }

    /// Refreshes live media playlists until they end, the duration passes, or a stop is requested.
    private func follow(imports: [String: String], into queue: AsyncStream<PrefetchObject>.Continuation) async {
        let started = ContinuousClock.now
        let deadline = options.duration.map { started + $0 }
        var schedule: [String: (next: ContinuousClock.Instant, lastSuccess: ContinuousClock.Instant)] = [:]
        for recording in state.withLock({ $0.snapshot.recordings }) where !recording.ended {
            schedule[recording.url] = (started + .seconds(recording.targetDuration), started)
        }
        while !schedule.isEmpty, !stopRequested.load(ordering: .relaxed) {
            let now = ContinuousClock.now
            if let deadline, now >= deadline { break }
            guard let (url, entry) = schedule.min(by: { $0.value.next < $1.value.next }) else { break }
            if entry.next > now {
                var wake = min(entry.next, now + .milliseconds(250))
                if let deadline { wake = min(wake, deadline) }
                try? await Task.sleep(until: wake, clock: .continuous)
                continue
            }
            let targetDuration = Duration.seconds(
                state.withLock { $0.snapshot.recordings.first { $0.url == url }?.targetDuration } ?? 6)
            do {
                let playlist = try await fetchPlaylist(url, retrying: false)
                let (objects, ended) = state.withLock { state -> ([PrefetchObject], Bool) in
                    guard let index = state.snapshot.recordings.firstIndex(where: { $0.url == url }) else {
                        return ([], true)
                    }
                    let objects = state.snapshot.recordings[index].record(playlist, url: url, imports: imports)
                    return (objects, state.snapshot.recordings[index].ended)
                }
                enqueue(objects, into: queue)
                if ended {
                    schedule[url] = nil
                } else {
                    // RFC 8216 6.3.4: the target duration after a change, half of it when nothing changed.
                    let wait = objects.isEmpty ? targetDuration / 2 : targetDuration
                    schedule[url] = (ContinuousClock.now + wait, ContinuousClock.now)
                }
                if !objects.isEmpty || ended { publish(final: false) }
            } catch {
                let now = ContinuousClock.now
                if now - entry.lastSuccess >= options.liveGiveUp {
                    fail(url, "gave up after \(options.liveGiveUp) of failed refreshes: \(error)")
                    schedule[url] = nil
                } else {
                    log("refresh of \(url) failed, trying again: \(error)")
                    schedule[url] = (now + max(.seconds(1), targetDuration / 2), entry.lastSuccess)
                }
            }
        }
        state.withLock { state in
            for index in state.snapshot.recordings.indices { state.snapshot.recordings[index].ended = true }
        }
    }

    private func fetchPlaylist(_ url: String, retrying: Bool = true) async throws -> Playlist {
        let bytes =
            retrying
            ? try await withRetries(url) { try await self.store.playlist(url, fresh: true) }
            : try await store.playlist(url, fresh: true)
        state.withLock { $0.progress.playlistFetches += 1 }
        do {
            return try Playlist(parsing: bytes).viewed(by: options.view)
        } catch let error as ManifestViewError {
            throw FailedFetch(status: nil, description: "\(url): \(error.message)")
        } catch {
            throw FailedFetch(status: nil, description: "invalid playlist \(url): \(error)")
        }
    }

    // MARK: Objects

    private func enqueue(_ objects: [PrefetchObject], into queue: AsyncStream<PrefetchObject>.Continuation) {
        for object in objects {
            let isNew = state.withLock { state in
                guard state.known.insert(object).inserted else { return false }
                state.progress.total += 1
                state.snapshot.pending.insert(object)
                return true
            }
            if isNew { queue.yield(object) }
        }
    }

    private func fetch(_ object: PrefetchObject) async {
        let skip = stopRequested.load(ordering: .relaxed) && !state.withLock { $0.live }
        if skip {
            state.withLock {
                $0.progress.skipped += 1
                $0.snapshot.pending.remove(object)
            }
            return
        }
        do {
            let outcome = try await withRetries(object.label) { try await self.store.store(object) }
            state.withLock { state in
                switch outcome {
                case .fetched(let bytes):
                    state.progress.fetched += 1
                    state.progress.bytes += bytes
                case .present:
                    state.progress.present += 1
                }
                state.snapshot.pending.remove(object)
            }
        } catch {
            state.withLock {
                $0.progress.failed += 1
                $0.snapshot.pending.remove(object)
            }
            fail(object.label, "\(error)")
        }
    }

    /// Runs `body`, again after a doubling delay while it fails with a transient ``FailedFetch``.
    private func withRetries<T: Sendable>(_ label: String, _ body: @Sendable () async throws -> T) async throws -> T {
        var delay = options.retryDelay
        var attempt = 0
        while true {
            do {
                return try await body()
            } catch let failure as FailedFetch where failure.isTransient && attempt < options.retries {
                attempt += 1
                log("attempt \(attempt) of \(label) failed, retrying in \(delay): \(failure)")
                try await Task.sleep(for: delay)
                delay *= 2
            }
        }
    }

    private func fail(_ url: String, _ reason: String) {
        log("failed: \(url): \(reason)")
        state.withLock { $0.failures.append(.init(url: url, reason: reason)) }
    }

    private func publish(final: Bool) {
        var snapshot = state.withLock { $0.snapshot }
        // A VOD playlist is written once, at the end, so that an interrupted run never leaves a short one behind.
        if !final { snapshot.recordings.removeAll { !$0.isLive } }
        if !final && snapshot.recordings.isEmpty { return }
        do {
            try store.publish(snapshot, final: final)
        } catch {
            fail(snapshot.entryURL, "cannot write the playlists: \(error)")
        }
    }
}
