import HLSCacheTestTraits
import Testing

@testable import HLSCacheServer

/// The connection's exchanges decided with no socket: each transition of ``ExchangeMachine`` on its own.
@Suite("Exchange machine", .sharedMachine)
struct ExchangeMachineTests {
    @Test("a new connection reads its first request and holds no read")
    func startsReading() {
        let machine = ExchangeMachine()
        #expect(machine.next(writable: true) == .read)
        #expect(machine.next(writable: false) == .read, "nothing in flight: a full socket holds nothing")
        #expect(!machine.holdsReads(writable: false))
        #expect(!machine.quiescing && !machine.isBusy)
    }

    @Test("an answer in flight: the next request is read while the socket takes writes, waits while it is full")
    func answerInFlightWaitsForTheSocket() {
        var machine = ExchangeMachine()
        machine.answerWritten(closes: false)
        #expect(machine.answersInFlight == 1 && machine.isBusy)
        #expect(machine.next(writable: true) == .read)
        #expect(machine.next(writable: false) == .wait)
        #expect(machine.holdsReads(writable: false) && !machine.holdsReads(writable: true))
    }

    @Test("the last answer on the wire drains the connection; an earlier one does not")
    func lastCompletionDrains() {
        var machine = ExchangeMachine()
        machine.answerWritten(closes: false)
        machine.answerWritten(closes: false)
        let answerCompleted = machine.answerCompleted()
        #expect(!answerCompleted)
        let answerCompleted2 = machine.answerCompleted()
        #expect(answerCompleted2)
        #expect(!machine.isBusy)
        let releasedWhenIdle = machine.releasedWhenIdle()
        #expect(releasedWhenIdle == .reads)
    }

    @Test("a closing answer ends the reading: nothing after it is read")
    func closingAnswerStopsReading() {
        var machine = ExchangeMachine()
        machine.answerWritten(closes: true)
        #expect(machine.reading == .closing)
        #expect(machine.next(writable: true) == .stop)
    }

    @Test("a plan holds the requests after it and the reads, whatever the socket, until it ends")
    func planHoldsEverything() {
        var machine = ExchangeMachine()
        machine.planStarted(closes: false)
        #expect(machine.planning && machine.isBusy)
        #expect(machine.next(writable: true) == .wait)
        #expect(machine.holdsReads(writable: true))
        let releasedWhenIdle2 = machine.releasedWhenIdle()
        #expect(releasedWhenIdle2 == [], "nothing goes on while planning")
    }

    @Test("a plan that wrote its end leaves it in flight; one that wrote nothing leaves the connection idle")
    func planEnds() {
        var wrote = ExchangeMachine()
        wrote.planStarted(closes: false)
        let planEnded = wrote.planEnded(wrote: true)
        #expect(planEnded)
        #expect(!wrote.planning && wrote.answersInFlight == 1)
        #expect(wrote.next(writable: true) == .read && wrote.next(writable: false) == .wait)
        let releasedWhenIdle = wrote.releasedWhenIdle()
        #expect(releasedWhenIdle == [], "its end is not on the wire yet")
        var left = ExchangeMachine()
        left.planStarted(closes: false)
        let leftEnded = left.planEnded(wrote: false)
        #expect(leftEnded)
        let leftReleased = left.releasedWhenIdle()
        #expect(!left.isBusy && leftReleased == .reads)
    }

    @Test("a plan that closes the connection ends its reading at once")
    func closingPlan() {
        var machine = ExchangeMachine()
        machine.planStarted(closes: true)
        #expect(machine.reading == .closing)
        _ = machine.planEnded(wrote: true)
        #expect(machine.next(writable: true) == .stop)
    }

    @Test("a parked request keeps the connection busy but holds no read: what comes next unparks it")
    func parkedRequest() {
        var machine = ExchangeMachine()
        machine.parkedRequest()
        #expect(machine.parked && machine.isBusy)
        #expect(!machine.holdsReads(writable: true) && machine.next(writable: true) == .read)
        let unparked = machine.unparked()
        #expect(unparked)
        let unparked2 = machine.unparked()
        #expect(!unparked2, "only once")
        #expect(!machine.isBusy)
    }

    @Test("handed over: the decoder reads the rest, its requests still one at a time; a closing connection stays so")
    func handedOver() {
        var machine = ExchangeMachine()
        machine.handedOver()
        #expect(machine.reading == .decoder)
        #expect(machine.next(writable: true) == .read)
        machine.planStarted(closes: false)
        #expect(machine.next(writable: true) == .wait)
        var closing = ExchangeMachine()
        closing.answerWritten(closes: true)
        closing.handedOver()
        #expect(closing.reading == .closing)
    }

    @Test("a plan whose answer turns out to close (an HTTP/1.0 body of unknown length) ends the reading")
    func planThatCloses() {
        var machine = ExchangeMachine()
        machine.planStarted(closes: false)
        machine.closesAfterPlan()
        #expect(machine.next(writable: true) == .stop)
    }

    @Test("answers drained inside the read loop are released when the outermost loop ends, not before")
    func drainInsideTheReadLoop() {
        var machine = ExchangeMachine()
        machine.answerWritten(closes: false)
        let readLoopStarted = machine.readLoopStarted()
        #expect(readLoopStarted)
        let readLoopStarted2 = machine.readLoopStarted()
        #expect(!readLoopStarted2, "a loop inside the loop is not the outermost")
        let answerCompleted3 = machine.answerCompleted()
        #expect(!answerCompleted3, "inside the loop: deferred")
        let readLoopEnded = machine.readLoopEnded()
        #expect(readLoopEnded)
        let readLoopEnded2 = machine.readLoopEnded()
        #expect(!readLoopEnded2, "released once")
    }

    @Test("a read loop that drained nothing releases nothing at its end")
    func readLoopWithoutDrain() {
        var machine = ExchangeMachine()
        let readLoopStarted3 = machine.readLoopStarted()
        #expect(readLoopStarted3)
        machine.answerWritten(closes: false)
        let readLoopEnded3 = machine.readLoopEnded()
        #expect(!readLoopEnded3)
    }

    @Test("a quiesce with nothing in progress goes on at once, and every answer after it closes the connection")
    func idleQuiesce() {
        var machine = ExchangeMachine()
        let quiesce = machine.quiesce()
        #expect(quiesce == .passOn)
        #expect(machine.quiescing)
    }

    @Test("a quiesce waits for the answers in flight and the plan, then goes on once")
    func heldQuiesce() {
        var machine = ExchangeMachine()
        machine.answerWritten(closes: false)
        machine.planStarted(closes: false)
        let quiesce2 = machine.quiesce()
        #expect(quiesce2 == .held)
        let answerCompleted4 = machine.answerCompleted()
        #expect(answerCompleted4)
        let releasedWhenIdle3 = machine.releasedWhenIdle()
        #expect(releasedWhenIdle3 == [], "the plan is still in progress")
        let planEnded = machine.planEnded(wrote: false)
        #expect(planEnded)
        let releasedWhenIdle4 = machine.releasedWhenIdle()
        #expect(releasedWhenIdle4 == [.reads, .quiesce])
        let releasedWhenIdle5 = machine.releasedWhenIdle()
        #expect(releasedWhenIdle5 == .reads, "the quiesce goes on once")
    }

    @Test("a half-close with nothing in progress goes on at once")
    func idleHalfClose() {
        var machine = ExchangeMachine()
        let inputClosed = machine.inputClosed()
        #expect(inputClosed)
    }

    @Test("a half-close waits for an answer in flight, a plan, a parked request")
    func heldHalfClose() {
        var inFlight = ExchangeMachine()
        inFlight.answerWritten(closes: false)
        let inputClosed = inFlight.inputClosed()
        #expect(!inputClosed)
        let answerCompleted = inFlight.answerCompleted()
        #expect(answerCompleted)
        let releasedWhenIdle = inFlight.releasedWhenIdle()
        #expect(releasedWhenIdle == [.reads, .inputClosed])

        var parked = ExchangeMachine()
        parked.parkedRequest()
        let parkedClosed = parked.inputClosed()
        #expect(!parkedClosed)
        let parkedReleased = parked.releasedWhenIdle()
        #expect(parkedReleased == .reads, "still parked: the half-close waits")
        parked.unparked()
        parked.planStarted(closes: false)
        let planEnded = parked.planEnded(wrote: false)
        #expect(planEnded)
        let releasedWhenIdle2 = parked.releasedWhenIdle()
        #expect(releasedWhenIdle2 == [.reads, .inputClosed])
    }
}
