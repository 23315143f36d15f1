/// The state of one fill in flight, shared by the task that fills it and every reader of it.
///
/// A plain value: the fill reports what happened (head arrived, bytes written to the temporary file or
/// kept in memory, finished, failed) and readers ask where the bytes they need are; each mutating method
/// returns what the caller must do, so the logic is tested without files or tasks. `Waiter` is the
/// caller's way to wake a suspended reader (a continuation in ``Flight``).
///
/// Body bytes live in two places: the first `fileBytes` in the temporary entry file (read back with
/// `pread`, so a late joiner gets everything received so far without holding it in memory), the rest in
/// memory. Bytes go to memory only once writing to the file has failed, or when the fill has no file (an answer
/// larger than the cache, no usable temporary area); an answer not stored is read from an unlinked file too.
struct FlightStateMachine<Waiter> {
    enum State {
        case awaitingHead
        case streaming
        case complete
        case failed(any Error)
    }

    /// What a reader should do next.
    enum ReadAction {
        /// Read `count` bytes at `offset` of `file` (an absolute file offset).
        case readFile(OpenFile, offset: Int64, count: Int)
        /// Here are the bytes.
        case bytes([UInt8])
        /// The body is complete and the reader has all of it.
        case end
        /// The fill failed: fail the reader's stream.
        case fail(any Error)
        /// Nothing yet: wait.
        case wait
    }

    /// What a reader of the head should do next.
    enum HeadAction {
        case head(FlightHead)
        case fail(any Error)
        case wait
    }

    private(set) var state: State = .awaitingHead
    private(set) var head: FlightHead?
    /// Body bytes received so far.
    private(set) var received: Int64 = 0
    private var file: OpenFile?
    /// Where the body starts in `file`.
    private var bodyOffset: Int64 = 0
    /// Body bytes readable from `file`: `0..<fileBytes`.
    private var fileBytes: Int64 = 0
    /// Body bytes held in memory: `chunkStarts[i]` is the body offset of `chunks[i]`; they cover `fileBytes..<received`.
    private var chunks: [[UInt8]] = []
    private var chunkStarts: [Int64] = []
    private var waiters: [Int: (condition: FlightWaitCondition, waiter: Waiter)] = [:]

    init() {}

    // MARK: Events from the fill

    /// The origin answered; the body, if stored, goes to `file` after `bodyOffset`.
    mutating func headArrived(_ head: FlightHead, file: OpenFile?, bodyOffset: Int64) -> [Waiter] {
        guard case .awaitingHead = state else { return [] }
        self.head = head
        self.file = file
        self.bodyOffset = bodyOffset
        state = .streaming
        return takeSatisfiedWaiters()
    }

    /// A published entry answered the flight instead of the origin: its whole body is in `file`.
    mutating func answeredFromStore(_ head: FlightHead, file: OpenFile, bodyOffset: Int64, length: Int64) -> [Waiter] {
        guard case .awaitingHead = state else { return [] }
        self.head = head
        self.file = file
        self.bodyOffset = bodyOffset
        fileBytes = length
        received = length
        state = .complete
        return takeSatisfiedWaiters()
    }

    /// `count` more body bytes are in the file. Only valid while no byte went to memory.
    mutating func appendedToFile(_ count: Int) -> [Waiter] {
        guard case .streaming = state, chunks.isEmpty, count > 0 else { return [] }
        fileBytes += Int64(count)
        received = fileBytes
        return takeSatisfiedWaiters()
    }

    /// More body bytes, kept in memory (the fill has no file, or writing to it failed).
    mutating func appendedToMemory(_ chunk: [UInt8]) -> [Waiter] {
        guard case .streaming = state, !chunk.isEmpty else { return [] }
        chunkStarts.append(received)
        chunks.append(chunk)
        received += Int64(chunk.count)
        return takeSatisfiedWaiters()
    }

    /// The whole body arrived, with the length the origin announced if it announced one.
    mutating func finished() -> [Waiter] {
        guard case .streaming = state else { return [] }
        state = .complete
        return takeAllWaiters()
    }

    /// The fill failed: every reader's stream fails with `error`.
    mutating func failed(_ error: any Error) -> [Waiter] {
        switch state {
        case .awaitingHead, .streaming:
            state = .failed(error)
            file = nil
            chunks = []
            chunkStarts = []
            return takeAllWaiters()
        case .complete, .failed:
            return []
        }
    }

    // MARK: Readers

    /// Where the head is.
    func headAction() -> HeadAction {
        switch state {
        case .awaitingHead: return .wait
        case .failed(let error): return .fail(error)
        case .streaming, .complete: return head.map { .head($0) } ?? .wait
        }
    }

    /// Where the body bytes from `position` are, at most `maxCount` of them.
    func read(at position: Int64, maxCount: Int) -> ReadAction {
        switch state {
        case .failed(let error):
            return .fail(error)
        case .awaitingHead:
            return .wait
        case .streaming, .complete:
            if position < fileBytes, let file {
                let count = Int(min(Int64(maxCount), fileBytes - position))
                return .readFile(file, offset: bodyOffset + position, count: count)
            }
            if position < received {
                return .bytes(memoryBytes(at: position, maxCount: maxCount))
            }
            if case .complete = state { return .end }
            return .wait
        }
    }

    /// Registers a waiter, or hands it back when what it waits for is already there.
    /// Whether any reader waits for the head or for bytes.
    var hasWaiters: Bool { !waiters.isEmpty }

    mutating func addWaiter(_ id: Int, for condition: FlightWaitCondition, _ waiter: Waiter) -> Waiter? {
        if isSatisfied(condition) { return waiter }
        waiters[id] = (condition, waiter)
        return nil
    }

    /// Removes a waiter whose reader was cancelled, and hands it back to be resumed with the cancellation.
    mutating func removeWaiter(_ id: Int) -> Waiter? {
        waiters.removeValue(forKey: id)?.waiter
    }

    // MARK: Private

    private func isSatisfied(_ condition: FlightWaitCondition) -> Bool {
        switch state {
        case .failed, .complete: return true
        case .awaitingHead: return false
        case .streaming:
            switch condition {
            case .head: return true
            case .data(let position): return received > position
            }
        }
    }

    // Loops and closures, not key paths: `map(\.waiter)` made a key path at run time on every call, on the path
    // between an origin's head and the requester's.
    private mutating func takeSatisfiedWaiters() -> [Waiter] {
        guard !waiters.isEmpty else { return [] }
        var ready: [Waiter] = []
        for entry in waiters.values where isSatisfied(entry.condition) { ready.append(entry.waiter) }
        if ready.count == waiters.count {
            waiters.removeAll()
        } else if !ready.isEmpty {
            waiters = waiters.filter { !isSatisfied($0.value.condition) }
        }
        return ready
    }

    private mutating func takeAllWaiters() -> [Waiter] {
        defer { waiters = [:] }
        return waiters.values.map { $0.waiter }
    }

    /// Bytes from memory at `position`, which is in `fileBytes..<received`.
    private func memoryBytes(at position: Int64, maxCount: Int) -> [UInt8] {
        // The last chunk starting at or before `position`.
        var low = 0
        var high = chunkStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if chunkStarts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        let chunk = chunks[low]
        let start = Int(position - chunkStarts[low])
        if start == 0 && chunk.count <= maxCount { return chunk }
        return Array(chunk[start..<min(chunk.count, start + maxCount)])
    }
}
