import Synchronization

/// Polls `condition` until it holds; `false` after `timeout`.
/// - Throws: `CancellationError` when the test is cancelled meanwhile.
public func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// A boolean set by one thread and awaited by a test.
public final class Flag: Sendable {
    private let value = Atomic<Bool>(false)

    /// An unset flag.
    public init() {}

    /// Whether it was set.
    public var isSet: Bool { value.load(ordering: .relaxed) }

    /// Sets it.
    public func set() {
        value.store(true, ordering: .relaxed)
    }

    /// Waits until it is set; `false` after `timeout`.
    public func wait(timeout: Duration) async -> Bool {
        (try? await eventually(timeout: timeout) { isSet }) ?? isSet
    }
}
