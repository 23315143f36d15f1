import HLSCacheTestTraits
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import HLSCacheServer

/// Wake-ups of parked requests run on their event loop, in the order they were queued, each once; one queued by
/// a wake-up runs in the next batch.
@Suite("Event-loop wake-ups", .sharedMachine)
struct EventLoopWakeUpsTests {
    @Test("a thousand wake-ups queued from other threads all run once, on their loop, in the order queued")
    func wakeUpsRunOnTheirLoopInOrder() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let loops = [group.next(), group.next()]
        let wakeUps = EventLoopWakeUps()
        let ran = Mutex<[Int: [Int]]>([:])
        let offLoop = Atomic<Int>(0)
        let done = loops[0].makePromise(of: Void.self)
        let count = 1_000
        for index in 0..<count {
            let slot = index % 2
            let loop = loops[slot]
            wakeUps.schedule(on: loop) { _ in
                if !loop.inEventLoop { offLoop.add(1, ordering: .relaxed) }
                let total = ran.withLock { ran in
                    ran[slot, default: []].append(index)
                    return ran.values.reduce(0) { $0 + $1.count }
                }
                if total == count { done.succeed() }
            }
        }
        try await done.futureResult.get()
        #expect(offLoop.load(ordering: .relaxed) == 0)
        let order = ran.withLock { $0 }
        #expect(order[0] == Array(stride(from: 0, to: count, by: 2)))
        #expect(order[1] == Array(stride(from: 1, to: count, by: 2)))
        try await group.shutdownGracefully()
    }

    @Test("a wake-up that queues another on its own loop does not wait for itself: the other runs next")
    func aWakeUpMayQueueAnother() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let wakeUps = EventLoopWakeUps()
        let done = loop.makePromise(of: [String].self)
        let steps = Mutex<[String]>([])
        wakeUps.schedule(on: loop) { _ in
            steps.withLock { $0.append("first") }
            wakeUps.schedule(on: loop) { _ in
                steps.withLock { $0.append("second") }
                done.succeed(steps.withLock { $0 })
            }
            steps.withLock { $0.append("first ends") }
        }
        #expect(try await done.futureResult.get() == ["first", "first ends", "second"])
        try await group.shutdownGracefully()
    }

    @Test("wake-ups queued together share one batch; one queued by a wake-up runs in the next, with a batch of its own")
    func wakeUpsOfABatchShareIt() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let wakeUps = EventLoopWakeUps()
        let done = loop.makePromise(of: (together: Bool, apart: Bool).self)
        // The batches themselves, kept alive on the loop, so that a freed one's address cannot come back.
        let seen = try await loop.submit { NIOLoopBoundBox([WakeBatch](), eventLoop: loop) }.get()
        // Queued from the loop itself, all three before it runs any: one batch.
        try await loop.submit {
            for index in 0..<3 {
                wakeUps.schedule(on: loop) { batch in
                    seen.value.append(batch)
                    guard index == 2 else { return }
                    wakeUps.schedule(on: loop) { next in
                        let batches = seen.value
                        done.succeed((batches.allSatisfy { $0 === batches[0] }, next !== batches[0]))
                    }
                }
            }
        }.get()
        let (together, apart) = try await done.futureResult.get()
        #expect(together, "the three queued together share a batch")
        #expect(apart, "the one queued during the batch has its own")
        try await group.shutdownGracefully()
    }
}
