import Dispatch
import Foundation
import Synchronization

/// A few threads of the cache's own for the calls that wait for the disk itself (`fdatasync`), so that a slow or
/// stalled disk holds none of the Swift concurrency pool's threads: the pool has only as many as the machine has
/// cores, and every task of the process (fills, responders, the janitor) needs one of them.
///
/// Work queues in order when every thread is busy: what waits then is publication (the sealed entries), never a
/// reader of a fill, which reads the temporary file as it is written.
package final class DiskThreads: Sendable {
    /// The process's disk threads, started at first use; they are never stopped.
    package static let shared = DiskThreads(count: 4, name: "hlscache-disk")

    private let work = Mutex<(jobs: [@Sendable () -> Void], stopping: Bool)>(([], false))
    private let ready = DispatchSemaphore(value: 0)
    private let count: Int

    /// Starts `count` threads named `name`.
    package init(count: Int, name: String) {
        self.count = max(1, count)
        for index in 0..<self.count {
            let threadName = "\(name)-\(index)"
            let thread = Thread { [self] in
                Self.name(threadName)
                runLoop()
            }
            thread.start()
        }
    }

    /// Runs `body` on one of the threads and returns what it returns, or throws what it throws. The calling task
    /// waits without holding a thread.
    func run<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let result: Result<Value, Failure> = await withCheckedContinuation { continuation in
            enqueue {
                continuation.resume(returning: Result { () throws(Failure) -> Value in try body() })
            }
        }
        return try result.get()
    }

    /// Ends the threads once the work queued so far is done. Work queued later never runs: stop only threads
    /// nothing uses any more.
    package func stop() {
        work.withLock { $0.stopping = true }
        for _ in 0..<count { ready.signal() }
    }

    /// Names the calling thread, as `top` and `perf` show it (a thread started from the concurrency pool is named
    /// after the pool's otherwise).
    private static func name(_ name: String) {
        Thread.current.name = name
    }

    private func enqueue(_ job: @escaping @Sendable () -> Void) {
        work.withLock { $0.jobs.append(job) }
        ready.signal()
    }

    private func runLoop() {
        while true {
            ready.wait()
            let (job, ends) = work.withLock { work -> ((@Sendable () -> Void)?, Bool) in
                if !work.jobs.isEmpty { return (work.jobs.removeFirst(), false) }
                return (nil, work.stopping)
            }
            if ends { return }
            job?()
        }
    }
}
