/// Every decision about an HTTP/1 connection's exchanges that does not touch a socket: whether the next request in its
/// unread bytes is read now, waits, or is not ours to read; whether the connection's reads are held; when a
/// half-close and a graceful-shutdown quiesce go on; when the connection closes after an answer. ``ConnectionFront``
/// drives it and carries out what it says; its tests drive it with no channel at all (`ExchangeMachineTests`).
///
/// A connection's exchanges go one at a time, in request order:
///
/// - A request answered **at once** (a hit, an error, one of hlscache's own pages) is written and counted among the
///   answers in flight until its last byte is on the wire (``answerWritten(closes:)``, ``answerCompleted()``).
///   While answers are in flight and the socket is full, the requests after them wait and reads are held.
/// - A request answered **later** (a miss, an expired entry: its answer is planned off the event loop, then streamed)
///   holds the requests after it and the reads until its end is written (``planStarted(closes:)``,
///   ``planEnded(wrote:)``).
/// - A **parked** request (an LL-HLS blocking reload waiting for a fill in flight) is answered when that fill ends, or
///   planned like a miss as soon as anything else comes (``parkedRequest()``, ``unparked()``).
/// - A request that **closes** the connection ends its reading: nothing after it is read.
/// - From the first request the front's scanner does not read, the HTTP/1 decoder reads the rest of the connection
///   (``handedOver()``); its requests go one at a time as the front's do.
///
/// A half-close and a quiesce wait for the answers in flight, the plan and the parked request; then they go on
/// (``Released``).
struct ExchangeMachine {
    /// Who reads the connection's bytes.
    enum Reading: Equatable {
        /// The front reads each request.
        case front
        /// The HTTP/1 decoder reads every byte from now on.
        case decoder
        /// An answer ends the connection: nothing more is read.
        case closing
    }

    /// What to do with the next complete request in the unread bytes.
    enum Next: Equatable {
        /// Read and answer it now.
        case read
        /// Keep it unread until ``Released/requests``.
        case wait
        /// Not the front's to read (the decoder's, or nothing more is read).
        case stop
    }

    /// What may go on once nothing of the front's is being written, planned or parked.
    struct Released: OptionSet, Equatable {
        let rawValue: UInt8
        /// A read held back.
        static let reads = Released(rawValue: 1)
        /// The graceful shutdown's quiesce.
        static let quiesce = Released(rawValue: 2)
        /// The client's half-close.
        static let inputClosed = Released(rawValue: 4)
    }

    /// What a quiesce does now.
    enum Quiesce: Equatable {
        /// Goes on at once: nothing of the front's is in progress.
        case passOn
        /// Waits for the answers in progress (``Released/quiesce``).
        case held
    }

    private(set) var reading = Reading.front
    /// Answers written whose last byte is not on the wire yet.
    private(set) var answersInFlight = 0
    /// Whether an answer is being planned or streamed off the event loop.
    private(set) var planning = false
    /// Whether a request is parked.
    private(set) var parked = false
    /// Whether the server is shutting down: each answer closes the connection.
    private(set) var quiescing = false
    private var heldQuiesce = false
    private var heldInputClosed = false
    /// Whether a read's requests are being gone through (answers may complete inside it).
    private var inReadLoop = false
    /// Whether the answers drained inside the read loop, which then releases what waited.
    private var drainDeferred = false

    /// Whether anything of the front's is in progress: an answer in flight, a plan, a parked request.
    var isBusy: Bool { answersInFlight > 0 || planning || parked }

    /// What to do with the next complete request (read by the front, or by the decoder), the socket taking writes
    /// or not.
    func next(writable: Bool) -> Next {
        guard reading != .closing else { return .stop }
        return holdsReads(writable: writable) ? .wait : .read
    }

    /// Whether a read asked for waits: a plan is in progress, or answers are in flight and the socket is full.
    func holdsReads(writable: Bool) -> Bool {
        planning || (answersInFlight > 0 && !writable)
    }

    /// An answer was written at once; `closes`: the connection ends after it.
    mutating func answerWritten(closes: Bool) {
        answersInFlight += 1
        if closes { reading = .closing }
    }

    /// An answer's last byte is on the wire (or the write failed).
    /// - Returns: whether the answers are drained now: the caller then reads what waited and asks
    ///   ``releasedWhenIdle()`` what else goes on.
    mutating func answerCompleted() -> Bool {
        answersInFlight = max(0, answersInFlight - 1)
        return answersInFlight == 0 && drained()
    }

    /// An answer will be planned off the event loop; `closes`: the connection ends after it.
    mutating func planStarted(closes: Bool) {
        planning = true
        if closes { reading = .closing }
    }

    /// The planned answer is over; `wrote`: its end was written (an answer in flight until it is on the wire).
    /// - Returns: whether what waited may go on now (see ``answerCompleted()``).
    mutating func planEnded(wrote: Bool) -> Bool {
        planning = false
        if wrote { answersInFlight += 1 }
        return drained()
    }

    /// A request parks.
    mutating func parkedRequest() {
        parked = true
    }

    /// The parked request is answered, or goes to be planned.
    /// - Returns: whether one was parked.
    @discardableResult
    mutating func unparked() -> Bool {
        defer { parked = false }
        return parked
    }

    /// The decoder reads the rest of the connection (its requests come to the machine as the front's did).
    mutating func handedOver() {
        if reading == .front { reading = .decoder }
    }

    /// The answer being planned turned out to close the connection (an HTTP/1.0 body of unknown length).
    mutating func closesAfterPlan() {
        reading = .closing
    }

    /// A read's requests are gone through now.
    /// - Returns: whether this is the outermost loop (an inner one comes from an answer completing inside it).
    mutating func readLoopStarted() -> Bool {
        defer { inReadLoop = true }
        return !inReadLoop
    }

    /// The outermost read loop ended.
    /// - Returns: whether answers drained during it: the caller releases what waited now.
    mutating func readLoopEnded() -> Bool {
        inReadLoop = false
        guard drainDeferred, answersInFlight == 0 else { return false }
        drainDeferred = false
        return true
    }

    /// After the requests that waited were read: what else goes on, if nothing of the front's is in progress.
    mutating func releasedWhenIdle() -> Released {
        guard answersInFlight == 0, !planning else { return [] }
        var released = Released.reads
        if heldQuiesce {
            heldQuiesce = false
            released.insert(.quiesce)
        }
        if !parked, heldInputClosed {
            heldInputClosed = false
            released.insert(.inputClosed)
        }
        return released
    }

    /// The server shuts down: every request answered from now on closes the connection (``quiescing``); the quiesce
    /// waits for what is in progress. A parked request is planned first (the caller unparks it).
    mutating func quiesce() -> Quiesce {
        quiescing = true
        guard answersInFlight > 0 || planning else { return .passOn }
        heldQuiesce = true
        return .held
    }

    /// The client half-closed: goes on now (`true`) or once nothing of the front's is in progress.
    mutating func inputClosed() -> Bool {
        guard isBusy else { return true }
        heldInputClosed = true
        return false
    }

    /// Whether what waited for the answers may go on: not inside the read loop, which does it when it ends.
    private mutating func drained() -> Bool {
        guard inReadLoop else { return true }
        drainDeferred = true
        return false
    }
}
