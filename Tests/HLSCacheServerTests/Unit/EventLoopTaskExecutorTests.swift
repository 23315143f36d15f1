import Foundation
import HLSCacheTestTraits
import NIOCore
import NIOPosix
import Testing

@testable import HLSCacheServer

/// Tasks that prefer an event loop's executor run on its thread, and come back to it after waiting on another
/// thread: where a connection's responder and a fill started for its miss run.
@Suite("Event-loop task executor", .sharedMachine)
struct EventLoopTaskExecutorTests {
    /// Resumes from a thread of its own, as the origin client's thread resumes a fill.
    private static func resumedFromAnotherThread() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread { continuation.resume() }.start()
        }
    }

    @Test("code preferring the executor runs on the loop's thread, before and after a wait resumed elsewhere")
    func runsOnTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let (before, after) = await withTaskExecutorPreference(EventLoopTaskExecutor(loop)) {
            let before = loop.inEventLoop
            await Self.resumedFromAnotherThread()
            return (before, loop.inEventLoop)
        }
        #expect(before && after)
        try await group.shutdownGracefully()
    }

    @Test("a task started on the loop with the executor preferred goes on there after it waits")
    func immediateTaskStaysOnTheLoop() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let task = try await loop.submit {
            Task.immediate(executorPreference: EventLoopTaskExecutor(loop)) {
                let started = loop.inEventLoop
                await Self.resumedFromAnotherThread()
                return (started, loop.inEventLoop)
            }
        }.get()
        let (started, resumed) = await task.value
        #expect(started && resumed)
        try await group.shutdownGracefully()
    }
}
