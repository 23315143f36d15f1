import ServiceLifecycle

/// With the event loops bound (``ThreadPlacement``): once a second, gives the threads started from a bound thread
/// since the process's whole mask again (``ThreadPlacement/unbindStrayThreads()``). A thread inherits the affinity of
/// the thread that starts it, and the concurrency pool starts its threads from whichever thread enqueues work, a
/// bound loop included, whenever it grows again.
struct StrayThreadService: Service {
    let placement: ThreadPlacement

    /// How often the threads are looked at.
    static let interval: Duration = .seconds(1)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                placement.unbindStrayThreads()
                try? await Task.sleep(for: Self.interval)
            }
        }
    }
}
