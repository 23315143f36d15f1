import ServiceLifecycle

/// Writes the live history's changed timelines to the cache directory every ``LiveHistory/persistInterval``, off
/// the requests' way (a render only records); the server writes them once more when it stops.
struct LiveHistoryService: Service {
    let history: LiveHistory

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(LiveHistory.persistInterval))
                history.persistAll()
            }
        }
    }
}
