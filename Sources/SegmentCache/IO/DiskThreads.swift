import Dispatch
import Foundation
import Synchronization

/// A few threads for the calls that wait for the disk itself (`fdatasync`), so that a slow or stalled disk holds
/// none of the Swift concurrency pool's threads: the pool has only as many as the machine has cores, and every task
/// of the process (fills, responders, the janitor) needs one of them.
///
/// Work queues in order when every thread is busy: what waits then is publication (the sealed entries), never a
/// reader of a fill, which reads the temporary file as it is written. The queue is bounded: each seal waiting in it
/// holds its temporary file open, and a disk that stalls for good must not take every descriptor with it.
package final class DiskThreads: Sendable {
    /// The process's disk threads, shared by its caches: four, started at first use, never stopped.
    package static let shared = DiskThreads(count: 4, queueLimit: 64, name: "hlscache-disk")

    private let work = Mutex<(jobs: Deque, stopping: Bool)>((Deque(), false))
    private let ready = DispatchSemaphore(value: 0)
    private let count: Int
    private let queueLimit: Int

    /// Starts the threads.
    /// - Parameters:
    ///   - count: how many threads (1 to 9: a thread's name keeps 15 characters).
    ///   - queueLimit: how much work may wait for a thread before ``run(_:)`` refuses more.
    ///   - name: the threads' name, `-0`, `-1`… added (at most 13 characters).
    package init(count: Int, queueLimit: Int, name: String) {
        self.count = min(max(1, count), 9)
        self.queueLimit = max(1, queueLimit)
        for index in 0..<self.count {
            let threadName = "\(name.prefix(13))-\(index)"
            let thread = Thread { [self] in
                Self.nameCurrentThread(threadName)
                runLoop()
            }
            thread.start()
        }
    }

    /// Runs `body` on one of the threads and returns what it returns, or throws what it throws; `nil`, without
    /// running it, when ``queueLimit`` pieces of work are already waiting. The calling task waits without holding a
    /// thread.
    func run<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value? {
        let result: Result<Value, Failure>? = await withCheckedContinuation { continuation in
            let queued = enqueue {
                continuation.resume(returning: Result { () throws(Failure) -> Value in try body() })
            }
            if !queued { continuation.resume(returning: nil) }
        }
        return try result?.get()
    }

    /// How much work waits for a thread now (not counting the work running).
    package var waiting: Int { work.withLock { $0.jobs.count } }

    /// Ends the threads once the work queued so far is done. Work offered later runs on the caller's thread.
    package func stop() {
        work.withLock { $0.stopping = true }
        for _ in 0..<count { ready.signal() }
    }

    /// Names the calling thread, as `top` and `perf` show it (a thread started from the concurrency pool is named
    /// after the pool's otherwise).
    private static func nameCurrentThread(_ name: String) {
        Thread.current.name = name
    }

    /// Queues `job`; `false` when the queue is full. After ``stop()`` the job runs here and now.
    private func enqueue(_ job: @escaping @Sendable () -> Void) -> Bool {
        let verdict = work.withLock { work -> Bool? in
            if work.stopping { return nil }
            guard work.jobs.count < queueLimit else { return false }
            work.jobs.append(job)
            return true
        }
        switch verdict {
        case nil:
            job()
            return true
        case let queued?:
            if queued { ready.signal() }
            return queued
        }
    }

    private func runLoop() {
        while true {
            ready.wait()
            let (job, ends) = work.withLock { work -> ((@Sendable () -> Void)?, Bool) in
                if let job = work.jobs.popFirst() { return (job, false) }
                return (nil, work.stopping)
            }
            if ends { return }
            job?()
        }
    }

    /// A first-in, first-out queue of work, taken from the front without moving the rest. A taken piece of work is
    /// released at once: what it captured (a sealed entry's open file, whose space an eviction frees only once it is
    /// closed) must not outlive it.
    private struct Deque {
        private var items: [(@Sendable () -> Void)?] = []
        private var head = 0

        var count: Int { items.count - head }

        mutating func append(_ item: @escaping @Sendable () -> Void) { items.append(item) }

        mutating func popFirst() -> (@Sendable () -> Void)? {
            guard head < items.count else { return nil }
            let item = items[head]
            items[head] = nil
            head += 1
            if head == items.count {
                items.removeAll(keepingCapacity: true)
                head = 0
            } else if head > 32, head * 2 >= items.count {
                items.removeFirst(head)
                head = 0
            }
            return item
        }
    }
}
