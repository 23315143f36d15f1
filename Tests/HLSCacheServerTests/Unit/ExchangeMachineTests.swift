import Testing

@testable import HLSCacheServer

/// The connection's exchanges decided with no socket: each transition of ``ExchangeMachine`` on its own.
@Suite("Exchange machine")
struct ExchangeMachineTests {
    @Test("a new connection reads its first request and holds no read")
    func startsReading() {
        let machine = ExchangeMachine()
        #expect(machine.next(writable: true) == .read)
        #expect(machine.next(writable: false) == .read, "nothing in flight: a full socket holds nothing")
        #expect(!machine.holdsReads(writable: false))
        #expect(machine.admitsAnswer && !machine.isBusy)
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
        let step1 = machine.answerCompleted()
        #expect(!step1)
        let step2 = machine.answerCompleted()
        #expect(step2)
        #expect(!machine.isBusy)
        let step3 = machine.releasedWhenIdle()
        #expect(step3 == .reads)
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
        let step4 = machine.releasedWhenIdle()
        #expect(step4 == [], "nothing goes on while planning")
    }

    @Test("a plan that wrote its end leaves it in flight; one that wrote nothing leaves the connection idle")
    func planEnds() {
        var wrote = ExchangeMachine()
        wrote.planStarted(closes: false)
        let step5 = wrote.planEnded(wrote: true)
        #expect(step5)
        #expect(!wrote.planning && wrote.answersInFlight == 1)
        #expect(wrote.next(writable: true) == .read && wrote.next(writable: false) == .wait)
        let step6 = wrote.releasedWhenIdle()
        #expect(step6 == [], "its end is not on the wire yet")
        var left = ExchangeMachine()
        left.planStarted(closes: false)
        let step7 = left.planEnded(wrote: false)
        #expect(step7)
        let step8 = left.releasedWhenIdle()
        #expect(!left.isBusy && step8 == .reads)
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
        let step9 = machine.unparked()
        #expect(step9)
        let step10 = machine.unparked()
        #expect(!step10, "only once")
        #expect(!machine.isBusy)
    }

    @Test("handed over: the decoder reads the rest, the front reads nothing more")
    func handedOver() {
        var machine = ExchangeMachine()
        machine.handedOver()
        #expect(machine.reading == .decoder)
        #expect(machine.next(writable: true) == .stop)
    }

    @Test("answers drained inside the read loop are released when the outermost loop ends, not before")
    func drainInsideTheReadLoop() {
        var machine = ExchangeMachine()
        machine.answerWritten(closes: false)
        let step11 = machine.readLoopStarted()
        #expect(step11)
        let step12 = machine.readLoopStarted()
        #expect(!step12, "a loop inside the loop is not the outermost")
        let step13 = machine.answerCompleted()
        #expect(!step13, "inside the loop: deferred")
        let step14 = machine.readLoopEnded()
        #expect(step14)
        let step15 = machine.readLoopEnded()
        #expect(!step15, "released once")
    }

    @Test("a read loop that drained nothing releases nothing at its end")
    func readLoopWithoutDrain() {
        var machine = ExchangeMachine()
        let step16 = machine.readLoopStarted()
        #expect(step16)
        machine.answerWritten(closes: false)
        let step17 = machine.readLoopEnded()
        #expect(!step17)
    }

    @Test("a quiesce with nothing in progress goes on at once, and no new request is the front's")
    func idleQuiesce() {
        var machine = ExchangeMachine()
        let step18 = machine.quiesce()
        #expect(step18 == .passOn)
        #expect(!machine.admitsAnswer)
    }

    @Test("a quiesce waits for the answers in flight and the plan, then goes on once")
    func heldQuiesce() {
        var machine = ExchangeMachine()
        machine.answerWritten(closes: false)
        machine.planStarted(closes: false)
        let step19 = machine.quiesce()
        #expect(step19 == .held)
        let step20 = machine.answerCompleted()
        #expect(step20)
        let step21 = machine.releasedWhenIdle()
        #expect(step21 == [], "the plan is still in progress")
        let step22 = machine.planEnded(wrote: false)
        #expect(step22)
        let step23 = machine.releasedWhenIdle()
        #expect(step23 == [.reads, .quiesce])
        let step24 = machine.releasedWhenIdle()
        #expect(step24 == .reads, "the quiesce goes on once")
    }

    @Test("a half-close with nothing in progress goes on at once")
    func idleHalfClose() {
        var machine = ExchangeMachine()
        let step25 = machine.inputClosed()
        #expect(step25)
    }

    @Test("a half-close waits for an answer in flight, a plan, a parked request")
    func heldHalfClose() {
        var inFlight = ExchangeMachine()
        inFlight.answerWritten(closes: false)
        let step26 = inFlight.inputClosed()
        #expect(!step26)
        let step27 = inFlight.answerCompleted()
        #expect(step27)
        let step28 = inFlight.releasedWhenIdle()
        #expect(step28 == [.reads, .inputClosed])

        var parked = ExchangeMachine()
        parked.parkedRequest()
        let step29 = parked.inputClosed()
        #expect(!step29)
        let step30 = parked.releasedWhenIdle()
        #expect(step30 == .reads, "still parked: the half-close waits")
        parked.unparked()
        parked.planStarted(closes: false)
        let step31 = parked.planEnded(wrote: false)
        #expect(step31)
        let step32 = parked.releasedWhenIdle()
        #expect(step32 == [.reads, .inputClosed])
    }
}
