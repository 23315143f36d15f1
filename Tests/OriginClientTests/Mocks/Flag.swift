import Synchronization

/// A boolean set by one thread and awaited by a test.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)

    /// Whether it was set.
    var isSet: Bool { value.load(ordering: .relaxed) }

    /// Sets it.
    func set() {
        value.store(true, ordering: .relaxed)
    }

    /// Waits until it is set; `false` after `timeout`.
    func wait(timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !isSet, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return isSet
    }
}

/// Polls `condition` until it holds; `false` after `timeout`.
func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}
