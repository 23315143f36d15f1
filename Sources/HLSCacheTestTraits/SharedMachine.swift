import Testing

/// The machine the tests share: at most ``width`` tests of the process run at once.
///
/// Swift Testing starts every test of the run at once. On a 2-core CI machine that is a hundred servers, origins,
/// players and browsers at the same moment, and tests that time a server's answer (a stale copy within half a second,
/// a delayed live playlist within a segment) read the whole suite's load instead. Every suite that starts a server,
/// an origin or a program names this trait; a test waits for a place before it starts, and a test inside one (a
/// nested suite's) does not wait again.
public struct SharedMachine: SuiteTrait, TestTrait, TestScoping {
    /// How many tests run at once. On two cores the suite then takes about 120 s instead of 85 to 100 with every test
    /// at once, and each test sees a fraction of the load: a test's server stalled up to 3 s with every test at once,
    /// under 1.5 s with 6 at once (where timed tests still failed in three full runs of eight).
    public static let width = 4

    /// Applies to each test of a suite that names it.
    public var isRecursive: Bool { true }

    /// Runs a test once it has a place (a suite, or a test inside one that holds a place, runs at once).
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil, !Self.holdsPlace else { return try await function() }
        await Self.places.take()
        do {
            try await Self.$holdsPlace.withValue(true) { try await function() }
        } catch {
            await Self.places.give()
            throw error
        }
        await Self.places.give()
    }

    @TaskLocal private static var holdsPlace = false

    private static let places = Places(count: width)

    /// A counting semaphore whose waiters are served in order.
    private actor Places {
        private var free: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(count: Int) { free = count }

        func take() async {
            if free > 0 {
                free -= 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func give() {
            if waiting.isEmpty {
                free += 1
            } else {
                waiting.removeFirst().resume()
            }
        }
    }
}

extension Trait where Self == SharedMachine {
    /// At most ``SharedMachine/width`` tests of the process at once (see ``SharedMachine``).
    public static var sharedMachine: Self { SharedMachine() }
}
