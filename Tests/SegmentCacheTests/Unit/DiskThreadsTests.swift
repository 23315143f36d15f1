import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Synchronization
import Testing

@testable import SegmentCache

/// The disk threads: what they return and throw, in what order they work, how full they get, and their stop.
@Suite(.sharedMachine) struct DiskThreadsTests {
    @Test func aValueComesBackAndATypedErrorIsRethrown() async throws {
        let threads = DiskThreads(count: 2, queueLimit: 8, name: "t-value")
        defer { threads.stop() }
        let value = try await threads.run { () throws(SystemError) -> Int in 42 }
        #expect(value == 42)
        do {
            _ = try await threads.run { () throws(SystemError) -> Int in
                throw SystemError(code: EIO, operation: "fdatasync", path: nil)
            }
            Issue.record("the error was not rethrown")
        } catch {
            #expect(error.code == EIO && error.operation == "fdatasync")
        }
    }

    @Test func everyPieceOfWorkFromManyTasksRunsOnce() async throws {
        let threads = DiskThreads(count: 2, queueLimit: 1_000, name: "t-many")
        defer { threads.stop() }
        let log = OrderLog()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask { _ = await threads.run { log.append(index) } }
            }
        }
        #expect(log.values.sorted() == Array(0..<200))
    }

    @Test("what a piece of work captured is released once it has run (an entry's open file frees its space then)")
    func workIsReleasedOnceItHasRun() async throws {
        let threads = DiskThreads(count: 1, queueLimit: 8, name: "t-release")
        defer { threads.stop() }
        let released = Flag()
        do {
            let captured = ReleaseTracker(released)
            _ = await threads.run { captured.touch() }
        }
        #expect(try await eventually { released.isSet }, "the thread still holds the work it ran")
    }

    @Test("past the queue limit, work is refused at once (nil) while the threads are busy, and taken again after")
    func aFullQueueRefusesWork() async throws {
        let threads = DiskThreads(count: 1, queueLimit: 2, name: "t-full")
        defer { threads.stop() }
        let busy = try await BusyThread(of: threads)
        async let first: Int? = threads.run { 1 }
        async let second: Int? = threads.run { 2 }
        #expect(try await eventually { threads.waiting == 2 })
        #expect(await threads.run { 3 } == nil, "a third piece of work waiting past the limit of 2")
        let busyRan = await busy.release()
        let (firstValue, secondValue) = await (first, second)
        #expect(busyRan && firstValue == 1 && secondValue == 2)
        #expect(await threads.run { 4 } == 4)
    }

    @Test func stopFinishesQueuedWorkAndLaterWorkRunsOnTheCaller() async throws {
        let threads = DiskThreads(count: 1, queueLimit: 8, name: "t-stop")
        let busy = try await BusyThread(of: threads)
        async let queued: Int? = threads.run { 7 }
        #expect(try await eventually { threads.waiting == 1 })
        threads.stop()
        let busyRan = await busy.release()
        let queuedValue = await queued
        #expect(busyRan)
        #expect(queuedValue == 7, "work queued before the stop is done")
        #expect(await threads.run { 8 } == 8, "work offered after the stop runs on the caller")
    }
}

/// Integers appended from several threads.
private final class OrderLog: Sendable {
    private let stored = Mutex<[Int]>([])

    func append(_ value: Int) { stored.withLock { $0.append(value) } }

    var values: [Int] { stored.withLock { $0 } }
}

/// Sets its flag when it is released.
private final class ReleaseTracker: Sendable {
    private let released: Flag

    init(_ released: Flag) { self.released = released }

    deinit { released.set() }

    func touch() {}
}

/// A piece of work that holds one of the disk threads until ``release()`` (or 30 s, should an expectation fail
/// first).
private struct BusyThread {
    private let held = Flag()
    private let work: Task<Bool?, Never>

    /// Starts the work and waits until it runs.
    init(of threads: DiskThreads) async throws {
        let held = held
        let running = Flag()
        DispatchQueue.global().asyncAfter(deadline: .now() + 30) { held.set() }
        work = Task {
            await threads.run {
                running.set()
                while !held.isSet { usleep(1_000) }
                return true
            }
        }
        guard await running.wait(timeout: .seconds(10)) else { throw CancellationError() }
    }

    /// Lets the thread go; whether the work ran to its end.
    func release() async -> Bool {
        held.set()
        return await work.value == true
    }
}
