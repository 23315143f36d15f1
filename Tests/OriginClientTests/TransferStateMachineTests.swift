import HLSCacheTestTraits
import Testing

@testable import OriginClient

/// The transfer protocol without sockets: buffering, pausing, resuming, ending and cancelling.
@Suite(.sharedMachine) struct TransferStateMachineTests {
    static let url = "http://origin.test/seg1.ts"
    static let head = ResponseHead(
        status: 200,
        headers: [],
        effectiveURL: url,
        contentLength: nil,
        redirectCount: 0
    )

    /// A machine whose head was delivered, so that the body flows.
    private func streamingMachine(limit: Int, chunkCapacity: Int = 128 * 1024) async throws -> TransferStateMachine {
        var machine = TransferStateMachine(limit: limit, url: Self.url, chunkCapacity: chunkCapacity)
        let head = try await withCheckedThrowingContinuation { continuation in
            guard case .start = machine.waitForHead(continuation, cancelled: .cancelled(url: Self.url)) else {
                Issue.record("the fetch should start the transfer")
                return
            }
            guard case .deliver(let waiting, let head) = machine.receiveHead(Self.head) else {
                Issue.record("the head should go to the waiting fetch at once")
                continuation.resume(throwing: OriginError.cancelled(url: Self.url))
                return
            }
            waiting.resume(returning: head)
        }
        #expect(head.status == 200)
        return machine
    }

    @Test("a head that comes after the fetch was cancelled is refused: curl aborts, the fetch is failed once")
    func aHeadAfterACancelIsRefused() async throws {
        var machine = TransferStateMachine(limit: 100, url: Self.url)
        await #expect(throws: OriginError.self) {
            _ = try await withCheckedThrowingContinuation { continuation in
                _ = machine.waitForHead(continuation, cancelled: .cancelled(url: Self.url))
                guard
                    case .failHead(let waiting, let error, droppedBytes: 0, abortWorker: true) = machine.cancel(
                        .cancelled(url: Self.url))
                else {
                    Issue.record("the cancel fails the fetch and aborts the transfer")
                    continuation.resume(throwing: OriginError.cancelled(url: Self.url))
                    return
                }
                waiting.resume(throwing: error)
            }
        }
        guard case .abort = machine.receiveHead(Self.head) else {
            Issue.record("the head finds nobody waiting: abort, no second resume")
            return
        }
        #expect(machine.handOver() == nil)
    }

    @Test func chunksAreBufferedUpToTheLimitThenTheTransferPauses() async throws {
        var machine = try await streamingMachine(limit: 100, chunkCapacity: 64)
        guard case .buffered(60) = machine.receiveChunk([UInt8](repeating: 1, count: 60)) else {
            Issue.record("first chunk should be buffered")
            return
        }
        guard case .buffered(40) = machine.receiveChunk([UInt8](repeating: 2, count: 40)) else {
            Issue.record("second chunk fits exactly")
            return
        }
        guard case .pause = machine.receiveChunk([3]) else {
            Issue.record("a full buffer pauses the transfer")
            return
        }
        #expect(machine.bufferedBytes == 100)

        // Draining 60 bytes leaves 40, under half the limit: one resume request.
        guard case .chunk(let first, let resume) = machine.pollChunk() else {
            Issue.record("a buffered chunk is returned")
            return
        }
        #expect(first == [UInt8](repeating: 1, count: 60))
        #expect(resume)
        guard case .chunk(let second, let resumeAgain) = machine.pollChunk() else {
            Issue.record("chunks come back in order")
            return
        }
        #expect(second.first == 2)
        #expect(!resumeAgain, "resume is requested once per pause")
        let resumed = machine.prepareResume()
        #expect(resumed)
        guard case .buffered(1) = machine.receiveChunk([3]) else {
            Issue.record("after the resume the held chunk is accepted")
            return
        }
    }

    @Test func aChunkLargerThanTheLimitIsAcceptedIntoAnEmptyBuffer() async throws {
        var machine = try await streamingMachine(limit: 10)
        guard case .buffered(16) = machine.receiveChunk([UInt8](repeating: 0, count: 16)) else {
            Issue.record("an empty buffer takes one chunk of any size")
            return
        }
        guard case .pause = machine.receiveChunk([0]) else {
            Issue.record("then the transfer pauses")
            return
        }
    }

    @Test func aWaitingReaderIsHandedTheBytesOfARoundInOneChunk() async throws {
        var machine = try await streamingMachine(limit: 100)
        let chunk = try await withCheckedThrowingContinuation { continuation in
            guard case .wait = machine.waitForChunk(continuation) else {
                Issue.record("nothing buffered: the reader waits")
                return
            }
            guard case .bufferedForReader(3) = machine.receiveChunk([7, 8, 9]),
                case .bufferedForReader(1) = machine.receiveChunk([10])
            else {
                Issue.record("the bytes are kept for the waiting reader until the round ends")
                return
            }
            guard case .chunk(let waiting, let chunk, let requestResume)? = machine.handOver() else {
                Issue.record("the round's end hands them over")
                return
            }
            #expect(!requestResume)
            waiting.resume(returning: chunk)
        }
        #expect(chunk == [7, 8, 9, 10])
        #expect(machine.bufferedBytes == 0)
        #expect(machine.handOver() == nil, "nobody waits any more")
    }

    @Test("the head goes to the fetch at once; the bytes that came with it are read without waiting")
    func theHeadGoesAtOnceAndItsRoundsBytesWait() async throws {
        var machine = TransferStateMachine(limit: 100, url: Self.url)
        let head = try await withCheckedThrowingContinuation { continuation in
            _ = machine.waitForHead(continuation, cancelled: .cancelled(url: Self.url))
            guard case .deliver(let waiting, let head) = machine.receiveHead(Self.head) else {
                Issue.record("the head goes to the fetching task at once, not at the round's end")
                return
            }
            guard case .buffered(3) = machine.receiveChunk([1, 2, 3]) else {
                Issue.record("the round's bytes are buffered for the fetching task")
                return
            }
            #expect(machine.handOver() == nil, "the round's end has nothing to hand over: nobody waits yet")
            waiting.resume(returning: head)
        }
        #expect(head.status == 200)
        guard case .chunk([1, 2, 3], requestResume: false) = machine.pollChunk() else {
            Issue.record("the bytes of the head's round are there at once")
            return
        }
    }

    @Test("a transfer that ends in its head's round: the head, then the body, then the end")
    func aFinishInTheHeadsRoundKeepsTheBodyThenTheEnd() async throws {
        var machine = TransferStateMachine(limit: 100, url: Self.url)
        let head = try await withCheckedThrowingContinuation { continuation in
            _ = machine.waitForHead(continuation, cancelled: .cancelled(url: Self.url))
            guard case .deliver(let waiting, let head) = machine.receiveHead(Self.head) else {
                Issue.record("the head goes at once")
                return
            }
            _ = machine.receiveChunk([4, 5])
            guard case .none = machine.finish(.finished) else {
                Issue.record("nobody waits for the body: the end is kept behind its bytes")
                return
            }
            waiting.resume(returning: head)
        }
        #expect(head.status == 200)
        guard case .chunk([4, 5], _) = machine.pollChunk(), case .end = machine.pollChunk() else {
            Issue.record("the body, then its end")
            return
        }
    }

    @Test func bytesAreGatheredIntoChunksOfAtMostTheChunkCapacity() async throws {
        var machine = try await streamingMachine(limit: 100, chunkCapacity: 4)
        for bytes: [UInt8] in [[1, 2, 3], [4], [5, 6], [7, 8, 9, 10, 11]] {
            _ = machine.receiveChunk(bytes)
        }
        var chunks: [[UInt8]] = []
        while case .chunk(let chunk, _) = machine.pollChunk() { chunks.append(chunk) }
        #expect(chunks == [[1, 2, 3, 4], [5, 6], [7, 8, 9, 10, 11]])
    }

    @Test func aFinishWithBytesLeftForTheWaitingReaderHandsThemOverBeforeTheEnd() async throws {
        var machine = try await streamingMachine(limit: 100)
        let chunk = try await withCheckedThrowingContinuation { continuation in
            _ = machine.waitForChunk(continuation)
            _ = machine.receiveChunk([1, 2])
            guard case .handOver(let waiting, let chunk) = machine.finish(.finished) else {
                Issue.record("the finish hands the bytes over first")
                return
            }
            waiting.resume(returning: chunk)
        }
        #expect(chunk == [1, 2])
        guard case .end = machine.pollChunk() else {
            Issue.record("then the end")
            return
        }
    }

    @Test func aFailureIsReportedAfterTheBufferedChunksNeverAsACleanEnd() async throws {
        var machine = try await streamingMachine(limit: 100)
        _ = machine.receiveChunk([1, 2])
        let truncated = OriginError.truncatedBody(url: Self.url, received: 2, expected: 10, detail: "closed")
        guard case .none = machine.finish(.failed(truncated)) else {
            Issue.record("nobody waits, so nothing is resumed")
            return
        }
        guard case .chunk([1, 2], _) = machine.pollChunk() else {
            Issue.record("buffered bytes first")
            return
        }
        guard case .fail(let error) = machine.pollChunk() else {
            Issue.record("then the error")
            return
        }
        #expect(error.kind == .truncatedBody)
        guard case .fail = machine.pollChunk() else {
            Issue.record("and the error again, never an end")
            return
        }
    }

    @Test func aWaitingReaderSeesTheEnd() async throws {
        var machine = try await streamingMachine(limit: 100)
        let chunk = try await withCheckedThrowingContinuation { continuation in
            _ = machine.waitForChunk(continuation)
            guard case .endBody(let waiting, .finished) = machine.finish(.finished) else {
                Issue.record("the finish resumes the reader")
                return
            }
            waiting.resume(returning: nil)
        }
        #expect(chunk == nil)
        guard case .end = machine.pollChunk() else {
            Issue.record("the end is final")
            return
        }
    }

    @Test func cancellingDropsTheBufferAndAbortsTheWorker() async throws {
        var machine = try await streamingMachine(limit: 100)
        _ = machine.receiveChunk([UInt8](repeating: 0, count: 30))
        guard
            case .failBody(nil, let error, droppedBytes: 30, abortWorker: true) =
                machine.cancel(.cancelled(url: Self.url))
        else {
            Issue.record("cancel releases the 30 buffered bytes and aborts the transfer")
            return
        }
        #expect(error.kind == .cancelled)
        guard case .abort = machine.receiveChunk([1]) else {
            Issue.record("the worker is told to abort on its next chunk")
            return
        }
        let resumed = machine.prepareResume()
        #expect(!resumed, "nothing to resume once cancelled")
    }

    @Test func cancellingAfterTheWorkerFinishedDoesNotAbortIt() async throws {
        var machine = try await streamingMachine(limit: 100)
        _ = machine.finish(.finished)
        guard case .failBody(_, _, _, abortWorker: false) = machine.cancel(.cancelled(url: Self.url)) else {
            Issue.record("the worker is already done")
            return
        }
    }

    @Test func cancellingBeforeTheHeadFailsTheFetch() async throws {
        var machine = TransferStateMachine(limit: 100, url: Self.url)
        guard case .none = machine.cancel(.cancelled(url: Self.url)) else {
            Issue.record("nothing started yet")
            return
        }
        let error = await #expect(throws: OriginError.self) {
            let _: ResponseHead = try await withCheckedThrowingContinuation { continuation in
                guard
                    case .fail(let waiting, let error) =
                        machine.waitForHead(continuation, cancelled: .cancelled(url: Self.url))
                else {
                    Issue.record("a cancelled transfer does not start")
                    return
                }
                waiting.resume(throwing: error)
            }
        }
        #expect(error?.kind == .cancelled)
    }

    @Test func aTransferThatEndsWithoutAHeadFailsTheFetch() async throws {
        var machine = TransferStateMachine(limit: 100, url: Self.url)
        let error = await #expect(throws: OriginError.self) {
            let _: ResponseHead = try await withCheckedThrowingContinuation { continuation in
                _ = machine.waitForHead(continuation, cancelled: .cancelled(url: Self.url))
                guard case .failHead(let waiting, let error) = machine.finish(.finished) else {
                    Issue.record("the fetch is failed")
                    return
                }
                waiting.resume(throwing: error)
            }
        }
        #expect(error?.kind == .protocolError)
    }
}

extension TransferStateMachine {
    /// `receiveChunk` with the bytes of an array, the length of what is still to come unknown.
    fileprivate mutating func receiveChunk(_ bytes: [UInt8]) -> ChunkAction {
        bytes.withUnsafeBytes { receiveChunk($0) }
    }
}
