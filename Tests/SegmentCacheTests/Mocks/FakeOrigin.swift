import ByteRanges
import Foundation
import HLSCacheTesting
import SegmentCache
import Synchronization

/// An origin in memory whose answers the tests shape: bodies, chunking, gates, failures, statuses.
final class FakeOrigin: ObjectSource {
    /// How the origin answers one URL.
    struct Behaviour: Sendable {
        var status = 200
        var cacheable: Bool?
        var chunkSize = 16_384
        /// Fail the body with ``FakeOriginError`` after this many bytes.
        var failAfterBytes: Int?
        /// Announce this length instead of the body's (a short or long body).
        var announcedLength: Int64??
        var expiry: Date?
        var etag: String?
        /// Hold the answer until the gate opens once.
        var headGate: Gate?
        /// Hold each chunk until the gate opens once.
        var chunkGate: Gate?
        /// Hold the body's end, after its last byte, until the gate opens once.
        var endGate: Gate?
        /// Throw ``FakeOriginError`` instead of answering.
        var failBeforeHead = false
    }

    private struct State {
        var bodies: [String: [UInt8]] = [:]
        var behaviours: [String: Behaviour] = [:]
        var fetches: [CacheKey: Int] = [:]
    }

    private let state = Mutex(State())

    init() {}

    /// Sets the body served for `url` (by default the ``PatternOrigin`` body).
    func setBody(_ body: [UInt8], for url: String) {
        state.withLock { $0.bodies[url] = body }
    }

    /// Sets how `url` is answered.
    func setBehaviour(_ behaviour: Behaviour, for url: String) {
        state.withLock { $0.behaviours[url] = behaviour }
    }

    /// The body of the whole object at `url`.
    func body(of url: String) -> [UInt8] {
        state.withLock { $0.bodies[url] } ?? PatternOrigin.body(of: CacheKey(url: url))
    }

    /// How many times `key` was fetched.
    func fetchCount(for key: CacheKey) -> Int { state.withLock { $0.fetches[key] ?? 0 } }

    /// How many fetches there were in all.
    var totalFetches: Int { state.withLock { $0.fetches.values.reduce(0, +) } }

    func fetch(_ key: CacheKey) async throws -> SourceResponse {
        let behaviour = state.withLock { state in
            state.fetches[key, default: 0] += 1
            // A behaviour set for the exact URL fetched (another viewer's token) wins over the key's.
            return state.behaviours[key.fetchURL] ?? state.behaviours[key.url] ?? Behaviour()
        }
        let whole = body(of: key.url)
        let bytes = key.range.map { Array(whole[Int($0.offset)..<Int($0.upperBound)]) } ?? whole
        if let gate = behaviour.headGate { await gate.wait() }
        if behaviour.failBeforeHead { throw FakeOriginError(url: key.url) }
        let chunks = AsyncThrowingStream<[UInt8], any Error> { continuation in
            let task = Task {
                var sent = 0
                while sent < bytes.count {
                    if let gate = behaviour.chunkGate { await gate.wait() }
                    if let limit = behaviour.failAfterBytes, sent >= limit {
                        continuation.finish(throwing: FakeOriginError(url: key.url))
                        return
                    }
                    var end = min(sent + behaviour.chunkSize, bytes.count)
                    if let limit = behaviour.failAfterBytes, sent < limit { end = min(end, limit) }
                    continuation.yield(Array(bytes[sent..<end]))
                    sent = end
                }
                if let gate = behaviour.endGate { await gate.wait() }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return SourceResponse(
            status: behaviour.status,
            cacheable: behaviour.cacheable,
            contentType: "video/mp2t",
            contentLength: behaviour.announcedLength ?? Int64(bytes.count),
            etag: behaviour.etag,
            lastModified: "Tue, 01 Jul 2025 10:00:00 GMT",
            expiry: behaviour.expiry,
            body: SourceBody(chunks)
        )
    }
}

/// The fake origin's failure.
struct FakeOriginError: Error, Equatable {
    let url: String
}

/// A gate the tests open step by step: each `open()` lets one waiter through, now or later.
final class Gate: Sendable {
    private let state = Mutex<(permits: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))

    init() {}

    /// Lets `count` waiters through.
    func open(_ count: Int = 1) {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.permits += count
            let woken = Array(state.waiters.prefix(state.permits))
            state.waiters.removeFirst(woken.count)
            state.permits -= woken.count
            return woken
        }
        for waiter in woken { waiter.resume() }
    }

    /// Lets everyone through from now on.
    func openForever() { open(1 << 40) }

    /// Waits for a permit.
    func wait() async {
        await withCheckedContinuation { continuation in
            let passes = state.withLock { state in
                if state.permits > 0 {
                    state.permits -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if passes { continuation.resume() }
        }
    }
}
