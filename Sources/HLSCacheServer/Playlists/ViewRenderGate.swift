import Synchronization

/// Holds the renderings of requests' own views on the concurrency pool to a few at once: each distinct view of a
/// large playlist is a parse and a rewrite of it, and a viewer naming view after view must not take every core from
/// the other answers. Past ``maxWaiting`` waiting, a rendering is refused (503, ``ViewRenderQueueFullError``).
final class ViewRenderGate: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
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

    private func enter() async throws {
        enum Entry { case now, wait, full }
        let entry = state.withLock { state -> Entry in
            if state.running < limit {
                state.running += 1
                return .now
            }
            return state.waiting.count < Self.maxWaiting ? .wait : .full
        }
        switch entry {
        case .now: return
        case .full: throw ViewRenderQueueFullError()
        case .wait:
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    // A place freed meanwhile is taken at once.
                    if state.running < limit {
                        state.running += 1
                        return true
                    }
                    state.waiting.append(continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// Hands the place to the first waiting, or frees it.
    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

/// Too many renderings of views wait already: the player asks again in a moment.
struct ViewRenderQueueFullError: Error, CustomStringConvertible {
    var description: String { "too many manifest views are being rendered: try again" }
}
