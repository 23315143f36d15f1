import Synchronization

/// Holds the renderings of requests' own views on the concurrency pool to a few at once: each distinct view of a
/// large playlist is a parse and a rewrite of it, and a viewer naming view after view must not take every core from
/// the other answers. Past ``maxWaiting`` waiting, a rendering is refused (503, ``ViewRenderQueueFullError``).
final class ViewRenderGate: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Bool, Never>] = []
    }

    private let state = Mutex(State())
    /// How many render at once.
    let limit: Int
    /// The most waiting.
    static let maxWaiting = 256

    /// - Parameter limit: how many render at once (at least one).
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `body` once fewer than ``limit`` renderings run.
    /// - Throws: ``ViewRenderQueueFullError`` when ``maxWaiting`` wait already; what `body` throws.
    func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await enter()
        defer { leave() }
        return try await body()
    }

    /// Takes a place, waits in turn for one, or is refused. The count of waiting is read and grown under one lock:
    /// deciding first and queueing after let two racing callers both take the last waiting place.
    private func enter() async throws {
        let fast = state.withLock { state -> Bool in
            guard state.running < limit else { return false }
            state.running += 1
            return true
        }
        if fast { return }
        let admitted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            enum Entry { case now, queued, full }
            let entry = state.withLock { state -> Entry in
                // A place freed meanwhile is taken at once.
                if state.running < limit {
                    state.running += 1
                    return .now
                }
                guard state.waiting.count < Self.maxWaiting else { return .full }
                state.waiting.append(continuation)
                return .queued
            }
            switch entry {
            case .now: continuation.resume(returning: true)
            case .full: continuation.resume(returning: false)
            case .queued: break
            }
        }
        guard admitted else { throw ViewRenderQueueFullError() }
    }

    /// Hands the place to the first waiting, or frees it.
    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume(returning: true)
    }
}

/// Too many renderings of views wait already: the player asks again in a moment.
struct ViewRenderQueueFullError: Error, CustomStringConvertible {
    var description: String { "too many manifest views are being rendered: try again" }
}
