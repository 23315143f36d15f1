import ByteRanges
import Foundation
import Glibc
import Synchronization

extension SegmentCache {
    /// Runs one fill to its end, whoever is still reading it.
    ///
    /// Re-checks the store first (an entry may have been published since the request missed, here or
    /// by another process), then fetches, streams the body to the flight's readers through the temporary
    /// file, and publishes it if it is complete. A disk error turns the rest of the fill into pass-through.
    /// - Parameter checkStore: whether to look for a published entry first; `false` when the caller looked just now.
    func fill(_ flight: Flight, checkStore: Bool = true) async {
        defer { endFlight(flight) }
        let key = flight.key
        if checkStore, let entry = openEntry(flight.digest, expecting: key), !entry.metadata.isExpired(at: clock.now())
        {
            noteHit(entry, at: clock.now())
            let head = FlightHead(metadata: entry.metadata, isStored: true, isFromStore: true)
            flight.answeredFromStore(
                head, file: entry.file, bodyOffset: entry.headerLength, length: entry.header.bodyLength)
            return
        }
        counters.originFetches.increment()
        let response: SourceResponse
        do {
            response = try await source.fetch(key)
        } catch {
            fail(flight, error)
            return
        }
        let metadata = EntryMetadata(
            key: key.withoutOriginAdditions,
            status: response.status,
            contentType: response.contentType,
            contentLength: response.contentLength,
            etag: response.etag,
            lastModified: response.lastModified,
            // At the header's precision: the fill's readers and later hits see the same version.
            fetchedAt: Date(millisecondsSince1970: clock.now().millisecondsSince1970),
            expiry: response.expiry,
            completeLength: response.completeLength,
            kind: response.kind,
            baseURL: response.baseURL
        )
        let prepared = flight.preparedFile.take()
        var writer: EntryWriter?
        // Announced larger than the cache: not kept, and its body buffered on disk all the same (below).
        let fits = (response.contentLength ?? 0) <= configuration.maxBytes
        var keeping = response.cacheable && fits
        if response.cacheable || response.contentLength != 0 {
            writer = makeWriter(for: metadata, prepared: prepared, mayEvict: keeping)
        } else {
            prepared?.discard()
        }
        // A subtraction, not a sum: the origin's length is anything up to `Int64.max`.
        if keeping, let current = writer, response.contentLength ?? 0 > configuration.maxBytes - current.fileSize {
            keeping = false
        }
        if response.cacheable, !keeping, let writer {
            log(
                .debug, "object of \(response.contentLength ?? 0) bytes is larger than the cache: passed through",
                key: key)
            // The file is its readers' buffer only, unlinked now (nothing left behind), as for an answer not stored
            // below; the flight stays in the table, so that later requests join it rather than fetch it again.
            writer.discard()
        }
        if !response.cacheable {
            // An answer that is not kept is shared by the requests already waiting for it, and by no later one: the
            // flight leaves the table before its head is handed on, so a request that follows one of its readers
            // (the next viewer, with another token, when tokens are left out of keys) fetches anew instead of joining
            // an answer that may have ended (Varnish's hit-for-pass does the same).
            endFlight(flight)
            // Its body still goes through the temporary file, unlinked now (never published, nothing left behind),
            // rather than memory: a slow reader of a large answer would otherwise have had the process hold all of
            // it (a large `no-store` object read slowly grew the server by its whole size).
            writer?.discard()
        }
        flight.headArrived(
            FlightHead(
                metadata: metadata, isStored: keeping && writer != nil, isFromStore: false,
                upstreamCache: response.upstreamCache),
            file: writer?.file,
            bodyOffset: writer?.headerLength ?? 0
        )
        // The readers the head woke go first (a body that came with the head is not written before they send the head
        // on; on an event loop, the hop below alone let a pool thread take the core first); then the body is taken in
        // on the global executor, off the event loop that a fill the hit path started prefers
        // (``startFill(_:lookedUp:executorPreference:)``): writing it may wait for the disk (its `fdatasync` waits on
        // ``DiskThreads``).
        await Task.yield()
        await withTaskExecutorPreference(globalConcurrentExecutor) {
            await takeBody(of: response, into: writer, keeping: keeping, for: flight)
        }
    }

    /// Streams the origin's body to the flight's readers through the temporary file, checks its length, and
    /// publishes the file when the body is complete and `keeping` (the answer is cacheable and fits in the cache;
    /// otherwise the file is only the readers' buffer, unlinked already, or once the body outgrows the cache).
    private func takeBody(
        of response: SourceResponse, into writer: EntryWriter?, keeping: Bool, for flight: Flight
    ) async {
        let key = flight.key
        var writer = writer
        var keeping = keeping
        var inMemory: Int64 = 0
        var received: Int64 = 0
        do {
            for try await chunk in response.body where !chunk.isEmpty {
                try Task.checkCancellation()
                if flight.isAbandoned(after: abandonAfterMilliseconds) {
                    counters.abandonedFills.increment()
                    let error = CacheError.abandoned(key: key, after: configuration.abandonAfter)
                    log(.debug, "\(error)", key: key)
                    throw error
                }
                received += Int64(chunk.count)
                counters.originBytes.add(Int64(chunk.count), ordering: .relaxed)
                if let announced = response.contentLength, received > announced {
                    throw CacheError.longBody(key: key, received: received, announced: announced)
                }
                inMemory += append(chunk, to: &writer, of: flight, keeping: &keeping)
                if inMemory > configuration.maxMemoryPerFill {
                    let error = CacheError.memoryBound(key: key, limit: configuration.maxMemoryPerFill)
                    log(.warning, "\(error)", key: key)
                    throw error
                }
            }
            // A cancelled stream may just end: never take that for a complete body, unless every announced byte is
            // in (below).
            if Task.isCancelled, response.contentLength != received { throw CancellationError() }
            if let announced = response.contentLength, received < announced {
                throw CacheError.shortBody(key: key, received: received, announced: announced)
            }
        } catch {
            // The cache closing cancels its fills: one whose every announced byte is in has a whole body (its
            // readers have it) and is kept, whatever its stream said of its end once cancelled.
            let whole = Task.isCancelled && !(error is CacheError) && response.contentLength == received
            if !whole {
                writer?.discard()
                fail(flight, error)
                return
            }
        }
        flight.finished()
        if let writer, keeping {
            await publish(writer, of: flight)
        } else {
            counters.passThroughFills.increment()
        }
    }

    /// ``Configuration/abandonAfter`` in milliseconds.
    private var abandonAfterMilliseconds: Int64 {
        let (seconds, attoseconds) = configuration.abandonAfter.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        return overflow ? .max : max(0, whole + attoseconds / 1_000_000_000_000_000)
    }

    /// Hands a chunk to the flight's readers, through the temporary file while there is one.
    ///
    /// An entry that outgrows the cache is no longer `keeping`: its file, unlinked, stays its readers' buffer (held
    /// in memory instead, all of a large object would be, for as long as its slowest reader takes). On a write
    /// failure the file is dropped and the rest goes through memory. A full file system is made room on once when
    /// `keeping` (an answer the cache keeps: not for one it passes on).
    /// - Returns: how many of the bytes went to memory.
    private func append(
        _ chunk: [UInt8], to writer: inout EntryWriter?, of flight: Flight, keeping: inout Bool
    ) -> Int64 {
        guard var current = writer else {
            flight.appendedToMemory(chunk)
            return Int64(chunk.count)
        }
        writer = nil
        if keeping, current.fileSize + Int64(chunk.count) > configuration.maxBytes {
            log(
                .debug, "object outgrows the cache's \(configuration.maxBytes) bytes, passing it through",
                key: flight.key)
            current.discard()
            keeping = false
        }
        let mayEvict = keeping
        var rest = chunk[...]
        var retried = false
        while true {
            do throws(PartialWriteError) {
                try current.append(rest)
                writer = current
                flight.appendedToFile(rest.count)
                return 0
            } catch {
                flight.appendedToFile(error.written)
                rest = rest.dropFirst(error.written)
                // A full file system: make room once and carry on, rather than pass the rest through.
                if error.underlying.code == ENOSPC, mayEvict, !retried,
                    evictForFullDisk(freeing: Int64(rest.count) + (8 << 20), keeping: flight.digest)
                {
                    retried = true
                    continue
                }
                if !rest.isEmpty { flight.appendedToMemory(Array(rest)) }
                current.discard()
                reportDiskError(error.underlying, key: flight.key)
                return Int64(rest.count)
            }
        }
    }

    /// Seals the complete temporary file, makes room, and renames it into place.
    private func publish(_ writer: EntryWriter, of flight: Flight) async {
        let key = flight.key
        let digest = flight.digest
        guard !flight.isInvalidated else {
            writer.discard()
            counters.passThroughFills.increment()
            return
        }
        do throws(SystemError) {
            do throws(SystemError) {
                try await seal(writer)
            } catch  where error.code == ENOSPC && evictForFullDisk(freeing: 8 << 20, keeping: digest) {
                // The header's block is allocated by this write (the file had a hole there): room is made once.
                try await seal(writer)
            }
        } catch {
            writer.discard()
            reportDiskError(error, key: key)
            return
        }
        await reserveRoom(for: digest, size: writer.fileSize, range: key.range)
        let path = layout.path(of: digest)
        do throws(SystemError) {
            try writer.publish(to: path, creating: layout.directories(of: digest))
        } catch {
            writer.discard()
            withState { _ = $0.removeEntry(digest) }
            reportDiskError(error, key: key)
            return
        }
        if flight.isInvalidated {
            // Invalidated between the check above and the rename: take it back.
            try? operations.unlink(path)
            withState { _ = $0.removeEntry(digest) }
            return
        }
        counters.publishedFills.increment()
        log(.debug, "published \(writer.bodyBytes) bytes as \(digest.relativePath)", key: key)
    }

    /// Writes the entry's header and, when the policy says so, syncs the file: on ``DiskThreads`` then, since
    /// `fdatasync` waits for the disk, which a concurrency-pool thread must never do.
    /// - Throws: ``SystemError``; `EBUSY` when too many seals already wait for the disk (the entry is not kept).
    private func seal(_ writer: EntryWriter) async throws(SystemError) {
        let sync = configuration.sync
        guard sync == .beforePublish else { return try writer.seal(sync: sync) }
        let sealed: Void? = try await (diskThreads ?? .shared).run { () throws(SystemError) in
            try writer.seal(sync: sync)
        }
        guard sealed != nil else {
            throw SystemError(code: EBUSY, operation: "fdatasync (too many entries waiting for the disk)", path: nil)
        }
    }

    /// Evicts least recently used entries until `size` more bytes fit, then records the entry-to-be so
    /// that concurrent fills count it. Waits while `digest` itself is being unlinked by an eviction.
    private func reserveRoom(for digest: EntryDigest, size: Int64, range: ByteRange?) async {
        enum Step {
            case wait
            case evict(EntryDigest)
            case done
        }
        // The smaller of the size bound and what the file system holds: short of headroom, free that much more.
        let deficit = diskDeficit()
        var bound: Int64?
        while true {
            let now = nowMilliseconds
            let step = withState { state -> Step in
                if state.isBeingRemoved(digest) { return .wait }
                state.removeEntry(digest)  // the version this fill replaces, if any
                if bound == nil {
                    let pending = state.pendingBytes + size
                    bound = deficit > 0 ? min(configuration.maxBytes, pending - deficit) : configuration.maxBytes
                }
                let maxBytes = bound ?? configuration.maxBytes
                if let victim = state.nextVictim(toFit: size, within: maxBytes, keeping: digest) {
                    return .evict(victim)
                }
                state.addEntry(digest, size: size, lastAccess: now, range: range)
                return .done
            }
            switch step {
            case .wait: await Task.yield()
            case .evict(let victim):
                unlinkEvicted(victim)
                if deficit > 0 { counters.diskFullEvictions.increment() }
            case .done: return
            }
        }
    }

    /// Unlinks an entry `CacheState.nextVictim` picked, outside the lock; readers holding it open keep reading.
    func unlinkEvicted(_ victim: EntryDigest) {
        do throws(SystemError) {
            try operations.unlink(layout.path(of: victim))
        } catch let error where error.code != ENOENT {
            reportDiskError(error, key: nil)
        } catch {}
        withState { $0.endRemoval(victim) }
        counters.evictions.increment()
    }

    private func fail(_ flight: Flight, _ error: any Error) {
        counters.failedFills.increment()
        log(.debug, "fill failed: \(error)", key: flight.key)
        // Out of the table first: a request that follows a reader of the failure tries again.
        endFlight(flight)
        flight.failed(error)
    }

    private func endFlight(_ flight: Flight) {
        // A fill that ended before the origin answered made no use of its prepared file.
        flight.preparedFile.take()?.discard()
        let callbacks = withState { state -> [@Sendable () -> Void] in
            guard state.flights[flight.digest] === flight else { return [] }
            state.endFlight(flight.digest)
            return state.fillEndCallbacks.removeValue(forKey: flight.digest) ?? []
        }
        for callback in callbacks { callback() }
    }

    /// Calls `callback` once the fill in flight for `key` has ended (published, or failed), or has an answer the
    /// cache does not keep (called when its head arrives: it leaves the table then), from the fill's task; `false`,
    /// and no call, when no fill of `key` is in flight.
    /// - Parameters:
    ///   - key: the object.
    ///   - callback: what to do then; it must not block.
    public func whenFillEnds(_ key: CacheKey, _ callback: @escaping @Sendable () -> Void) -> Bool {
        let digest = EntryDigest(key)
        return withState { state in
            guard state.flights[digest] != nil else { return false }
            state.fillEndCallbacks[digest, default: []].append(callback)
            return true
        }
    }

    /// Runs the fill of `flight` (numbered `id`, recorded as starting) on a task started at once on the caller's
    /// thread (``FillStart/immediate(executorPreference:)``): it runs there until it first waits, for the origin's
    /// answer, so the origin request is handed to the origin client before this returns.
    func startImmediately(
        _ flight: Flight, id: UInt64, checkStore: Bool, executorPreference: (any TaskExecutor)?
    ) {
        // Outside the lock: the fill takes it.
        let task = Task.immediate(executorPreference: executorPreference) { [self] in
            await runFill(flight, id: id, checkStore: checkStore)
        }
        withState { state in
            // Recorded unless it has ended already (its end removed its record); `close()` waits for it either way.
            if case .starting = state.fillTasks[id] { state.fillTasks[id] = .running(task) }
        }
        // The origin request is with the origin client's thread now. The core goes to it first: on a machine that
        // runs the threads of a chain of wake-ups on one core, the caller's work that follows (the temporary file, the
        // request's decoding) would otherwise come before the request leaves.
        sched_yield()
        // On the caller's thread, after the origin request left: made on a task of its own it was ready later, and
        // the cold first byte measured later too (an `open` that creates is slow after an idle spell).
        prepareFile(for: flight)
    }
}
