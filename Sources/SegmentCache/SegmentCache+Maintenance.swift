import Foundation
import Glibc
import Synchronization

extension SegmentCache {
    /// The janitor: every ``Configuration/janitorInterval``, evicts down to ``Configuration/maxBytes`` and
    /// persists last-access times; every ``Configuration/rescanInterval``, also rescans the directory for
    /// other processes' entries and removes dead processes' temporary files. Returns when cancelled,
    /// after closing the cache (see ``close()``).
    ///
    /// Fills evict what they need before they publish, so the bound holds without the janitor; it catches
    /// up with entries other processes published.
    public func run() async {
        let janitorInterval = configuration.janitorInterval
        let ticksPerRescan = max(1, Int(configuration.rescanInterval / janitorInterval))
        var tick = 0
        if withState({ $0.needsRescan }) { performMaintenance(rescan: true) }
        while !Task.isCancelled {
            do {
                try await clock.sleep(for: janitorInterval)
            } catch {
                break
            }
            tick += 1
            performMaintenance(rescan: tick % ticksPerRescan == 0)
        }
        await close()
    }

    /// Lets go of the entries kept open for hits whose files lost their name (replaced or removed by another process
    /// on the directory), which would otherwise hold their blocks until hit again.
    func releaseUnlinkedOpenEntries() {
        for entry in withState({ $0.openEntries.values }) {
            guard ((try? operations.linkCount(of: entry.file.descriptor)) ?? 0) == 0 else { continue }
            withState { $0.releaseOpen(entry.digest, ifFile: entry.file) }
        }
    }

    /// One janitor pass, now: evict down to the bound, persist last-access times and, if asked, rescan.
    ///
    /// A cache opened from a snapshot does not know what other processes did since it was written; a
    /// process that does not run ``run()`` (a CLI) calls this with `rescan: true` to catch up.
    /// - Parameter rescan: whether to rescan the directory and sweep dead processes' temporary files.
    public func performMaintenance(rescan: Bool = false) {
        releaseUnlinkedOpenEntries()
        if rescan {
            rescanDirectory()
            withState { $0.needsRescan = false }
        }
        evictToLimit()
        persistLastAccess()
    }

    /// Waits until no fill is in flight, fills started meanwhile included, without cancelling any: a fill whose
    /// body a reader has drained may still be syncing and renaming its entry into place. A writer that must
    /// leave its objects published (the prefetch command) calls this before ``close()``.
    public func finishFills() async {
        while true {
            let (tasks, starting) = withState { Self.fillTasks(in: $0) }
            if tasks.isEmpty, !starting { return }
            for task in tasks { await task.value }
            if starting { await Self.waitForStartingFills() }
        }
    }

    /// The fills' running tasks, and whether any is being started.
    private static func fillTasks(in state: CacheState) -> ([Task<Void, Never>], Bool) {
        (state.fillTasks.values.compactMap(\.task), state.fillTasks.values.contains { $0.task == nil })
    }

    /// A fill being started is recorded within microseconds, by the thread starting it.
    private static func waitForStartingFills() async {
        try? await Task.sleep(for: .milliseconds(1))
    }

    /// Stops the cache: cancels the fills in flight (their readers' streams fail) and waits for them,
    /// writes last-access times to the entries and the index snapshot the next open reads, and releases
    /// the instance lock. Later fetches throw. Idempotent.
    public func close() async {
        // Fills being started when the cache closes are recorded after this first look: look until none is left.
        while true {
            let (tasks, starting) = withState { state in
                state.isClosed = true
                state.releaseAllOpen()
                return Self.fillTasks(in: state)
            }
            if tasks.isEmpty, !starting { break }
            for task in tasks { task.cancel() }
            for task in tasks { await task.value }
            if starting { await Self.waitForStartingFills() }
        }
        persistLastAccess()
        writeSnapshot()
        temporaryArea?.removeLockFile()
        instanceWatch.stop()
    }

    /// Writes the index snapshot, at the first close only, and only if no other instance used the directory
    /// meanwhile (see `IndexSnapshot`).
    private func writeSnapshot() {
        guard let temporaryArea, !IndexSnapshot.isShared(in: layout.root) else { return }
        let entries = withState { state -> [ScannedEntry]? in
            guard !state.snapshotWritten else { return nil }
            state.snapshotWritten = true
            return state.index.entries
        }
        guard let entries else { return }
        do throws(SystemError) {
            try IndexSnapshot.write(
                entries, in: layout.root, temporaryPath: temporaryArea.makePath(), operations: operations)
        } catch {
            reportDiskError(error, key: nil)
        }
    }

    /// Evicts least recently used entries until the total is within the bound.
    func evictToLimit() {
        let maxBytes = configuration.maxBytes
        while let victim = withState({ $0.nextVictim(toFit: 0, within: maxBytes, keeping: nil) }) {
            unlinkEvicted(victim)
        }
    }

    /// Writes the last access of entries used since the last pass to their modification time.
    func persistLastAccess() {
        guard temporaryArea != nil else { return }
        let updates = withState { state in
            defer { state.dirtyAccess = [] }
            return state.dirtyAccess.compactMap { digest in state.index.lastAccess(of: digest).map { (digest, $0) } }
        }
        var failure: SystemError?
        for (digest, lastAccess) in updates {
            do throws(SystemError) {
                try operations.setModificationTime(layout.path(of: digest), milliseconds: lastAccess)
            } catch let error where error.code != ENOENT {
                failure = error
            } catch {}
        }
        // One report per pass: a read-only directory would otherwise log once per entry.
        if let failure { reportDiskError(failure, key: nil) }
    }

    /// Brings the index in line with the directory: adds entries other processes published, drops
    /// entries other processes removed, and sweeps temporary files of dead processes. Works in batches
    /// so that hits never wait long for the lock.
    func rescanDirectory() {
        let started = nowMilliseconds
        let swept = TemporaryArea.sweep(directory: layout.temporaryDirectory, except: temporaryArea?.instance)
        for failure in swept.failures { reportDiskError(failure, key: nil) }
        let scanned = DirectoryScanner.scan(root: layout.root)
        let batchSize = 1024
        for start in stride(from: 0, to: scanned.count, by: batchSize) {
            let batch = scanned[start..<min(start + batchSize, scanned.count)]
            withState { state in
                for entry in batch where !state.index.contains(entry.digest) && !state.isBeingRemoved(entry.digest) {
                    state.addFoundEntry(entry.digest, size: entry.size, lastAccess: entry.lastAccess)
                }
            }
        }
        let onDisk = Set(scanned.map(\.digest))
        let known = withState { Array($0.index.digests) }
        let gone = known.filter { !onDisk.contains($0) }
        for start in stride(from: 0, to: gone.count, by: batchSize) {
            let batch = gone[start..<min(start + batchSize, gone.count)]
            withState { state in
                // Entries published after the scan started are not in it; keep them.
                for digest in batch
                where state.flights[digest] == nil && (state.index.lastAccess(of: digest) ?? 0) < started {
                    state.removeEntry(digest)
                }
            }
        }
    }
}
