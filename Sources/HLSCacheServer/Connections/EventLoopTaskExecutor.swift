import NIOCore

/// A task executor that runs every job it is given on one event loop's thread.
///
/// A connection's task prefers its channel's loop (``PortListeners``), and so does a fill the hit path starts
/// there for a miss (``ConnectionFront``). When the origin answers, the origin client's thread wakes that loop once: the
/// fill announces the head there, the responder it wakes runs there next, and its answer goes to the socket with no
/// other thread to schedule in between. A fill takes its body in (its writes) on the global executor, and waits for
/// its `fdatasync` on the cache's disk threads.
///
/// Jobs are handed to the loop with `execute`: the loop must outlive every task that prefers it, as the server's do
/// (NIO's singleton group, never shut down); a job given to a loop that has shut down would never run.
final class EventLoopTaskExecutor: TaskExecutor {
    /// The loop whose thread runs the jobs.
    let eventLoop: any EventLoop

    /// An executor for `eventLoop`.
    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
