import Dispatch
import Foundation
import Synchronization

/// A few threads of the cache's own for the calls that wait for the disk itself (`fdatasync`), so that a slow or
/// stalled disk holds none of the Swift concurrency pool's threads: the pool has only as many as the machine has
/// cores, and every task of the process (fills, responders, the janitor) needs one of them.
///
/// Work queues in order when every thread is busy: what waits then is publication (the sealed entries), never a
/// reader of a fill, which reads the temporary file as it is written.
final class DiskThreads: Sendable {
    /// The process's disk threads, started at first use.
    static let shared = DiskThreads(count: 4, name: "hlscache-disk")

    private let work = Mutex<[@Sendable () -> Void]>([])
    private let ready = DispatchSemaphore(value: 0)

    /// Starts `count` threads named `name`, which live as long as the process.
    init(count: Int, name: String) {
        for index in 0..<max(1, count) {
            let thread = Thread { [self] in runLoop() }
            thread.name = "\(name)-\(index)"
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

    private func enqueue(_ job: @escaping @Sendable () -> Void) {
        work.withLock { $0.append(job) }
        ready.signal()
    }

    private func runLoop() {
        while true {
            ready.wait()
            let job = work.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            job?()
        }
    }
}
