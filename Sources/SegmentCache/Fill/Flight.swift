import Glibc
import Synchronization

/// One fill in flight: the fetch of one key from the origin, shared by every request for that key.
///
/// The fill task reports progress; any number of readers, joining at any time, read the body from
/// the start (or any offset) while it is still arriving, each at its own pace. When the fill fails,
/// every reader's next read throws, so no stream ends cleanly on a failed fill.
final class Flight: Sendable {
    typealias Waiter = CheckedContinuation<Void, any Error>

    /// The key being filled.
    let key: CacheKey
    /// Its digest: the flight's slot in the cache's table and the entry's file name.
    let digest: EntryDigest
    private let machine = Mutex(FlightStateMachine<Waiter>())
    private let waiterIDs = Atomic<Int>(0)
    private let invalidated = Atomic<Bool>(false)
    private let onReadError: @Sendable (SystemError) -> Void
    /// When a reader last asked for the head or for bytes (`CLOCK_MONOTONIC_COARSE`, ms): a fill nobody reads is
    /// abandoned after a while (``isAbandoned(after:)``).
    private let lastRead = Atomic<Int64>(Flight.now())
    /// The temporary file made for this fill ahead of the origin's answer, if any (``SegmentCache/startFill(_:lookedUp:)``).
    let preparedFile = PreparedFileSlot()

    /// Creates a flight.
    /// - Parameters:
    ///   - key: the key being filled.
    ///   - digest: the key's digest, when the caller has it already (a SHA-256 less on a miss's first byte).
    ///   - onReadError: told about a failed read of the temporary file, to log and count it.
    init(key: CacheKey, digest: EntryDigest? = nil, onReadError: @escaping @Sendable (SystemError) -> Void) {
        self.key = key
        self.digest = digest ?? EntryDigest(key)
        self.onReadError = onReadError
    }

    /// Whether ``invalidate()`` was called: the fill must not publish what it fetched.
    var isInvalidated: Bool { invalidated.load(ordering: .acquiring) }

    /// Forbids publishing this fill's result (the key was invalidated while it was running).
    func invalidate() { invalidated.store(true, ordering: .releasing) }

    // MARK: Readers

    /// Waits for the origin's answer.
    /// - Throws: the fill's error, or `CancellationError`.
    func head() async throws -> FlightHead {
        lastRead.store(Self.now(), ordering: .relaxed)
        while true {
            switch machine.withLock({ $0.headAction() }) {
            case .head(let head): return head
            case .fail(let error): throw error
            case .wait: try await wait(for: .head, isolation: nil)
            }
        }
    }

    /// Reads body bytes from `position`, waiting for them if they have not arrived yet.
    /// - Returns: up to `maxCount` bytes, or `nil` when the complete body has been read.
    /// - Throws: the fill's error once it failed, a ``CacheError`` on a read failure, or `CancellationError`.
    func read(
        at position: Int64, maxCount: Int, isolation: isolated (any Actor)? = #isolation
    ) async throws -> [UInt8]? {
        lastRead.store(Self.now(), ordering: .relaxed)
        while true {
            switch machine.withLock({ $0.read(at: position, maxCount: maxCount) }) {
            case .readFile(let file, let offset, let count):
                do throws(SystemError) {
                    let bytes = try file.read(count: count, at: offset)
                    guard !bytes.isEmpty else {
                        throw SystemError(code: EIO, operation: "read (file ends early)", path: nil)
                    }
                    return bytes
                } catch {
                    onReadError(error)
                    throw CacheError.disk(error)
                }
            case .bytes(let bytes): return bytes
            case .end: return nil
            case .fail(let error): throw error
            case .wait: try await wait(for: .data(after: position), isolation: isolation)
            }
        }
    }

    private func wait(for condition: FlightWaitCondition, isolation: isolated (any Actor)?) async throws {
        let id = waiterIDs.add(1, ordering: .relaxed).newValue
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation(isolation: isolation) { (continuation: Waiter) in
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                let ready = machine.withLock { $0.addWaiter(id, for: condition, continuation) }
                ready?.resume()
            }
        } onCancel: {
            machine.withLock { $0.removeWaiter(id) }?.resume(throwing: CancellationError())
        }
    }

    /// Whether no reader waits for the fill and none has read from it for `milliseconds`: every requester has gone
    /// (or stopped reading), and the rest of the body would be fetched for nobody.
    func isAbandoned(after milliseconds: Int64) -> Bool {
        guard Self.now() &- lastRead.load(ordering: .relaxed) > milliseconds else { return false }
        return !machine.withLock { $0.hasWaiters }
    }

    /// `CLOCK_MONOTONIC_COARSE` in milliseconds.
    private static func now() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }

    // MARK: The fill

    /// The origin answered.
    func headArrived(_ head: FlightHead, file: OpenFile?, bodyOffset: Int64) {
        resume(machine.withLock { $0.headArrived(head, file: file, bodyOffset: bodyOffset) })
    }

    /// An entry published meanwhile answers the flight.
    func answeredFromStore(_ head: FlightHead, file: OpenFile, bodyOffset: Int64, length: Int64) {
        resume(machine.withLock { $0.answeredFromStore(head, file: file, bodyOffset: bodyOffset, length: length) })
    }

    /// `count` more body bytes are in the temporary file.
    func appendedToFile(_ count: Int) {
        resume(machine.withLock { $0.appendedToFile(count) })
    }

    /// More body bytes, held in memory.
    func appendedToMemory(_ chunk: [UInt8]) {
        resume(machine.withLock { $0.appendedToMemory(chunk) })
    }

    /// The whole body arrived.
    func finished() {
        resume(machine.withLock { $0.finished() })
    }

    /// The fill failed; every reader fails with `error`.
    func failed(_ error: any Error) {
        resume(machine.withLock { $0.failed(error) })
    }

    private func resume(_ waiters: [Waiter]) {
        // Readers woken now are about to read: they count as reading (the next chunk may come before they run).
        if !waiters.isEmpty { lastRead.store(Self.now(), ordering: .relaxed) }
        for waiter in waiters { waiter.resume() }
    }
}
