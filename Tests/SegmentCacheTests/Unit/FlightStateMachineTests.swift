import Foundation
import Glibc
import HLSCacheTestTraits
import Testing

@testable import SegmentCache

@Suite("Flight state machine", .sharedMachine)
struct FlightStateMachineTests {
    static let head = FlightHead(
        metadata: EntryMetadata(key: CacheKey(url: "https://o/s.ts"), status: 200, fetchedAt: Date()),
        isStored: false,
        isFromStore: false
    )

    @Test func readersWaitForTheHeadThenForBytesBeyondTheirPosition() {
        var machine = FlightStateMachine<Int>()
        #expect(machine.addWaiter(1, for: .head, 1) == nil)
        #expect(machine.addWaiter(2, for: .data(after: 3), 2) == nil)
        #expect(machine.headArrived(Self.head, file: nil, bodyOffset: 0) == [1])
        #expect(machine.appendedToMemory([1, 2, 3]).isEmpty)
        #expect(machine.appendedToMemory([4]) == [2])
        guard case .bytes(let bytes) = machine.read(at: 1, maxCount: 10) else {
            Issue.record("expected bytes")
            return
        }
        #expect(bytes == [2, 3])
        guard case .wait = machine.read(at: 4, maxCount: 10) else {
            Issue.record("expected to wait")
            return
        }
        #expect(machine.addWaiter(3, for: .data(after: 4), 3) == nil)
        #expect(machine.finished() == [3])
        guard case .end = machine.read(at: 4, maxCount: 10) else {
            Issue.record("expected the end")
            return
        }
    }

    @Test func failureFailsEveryReaderEvenWithBytesLeftToRead() {
        var machine = FlightStateMachine<Int>()
        _ = machine.headArrived(Self.head, file: nil, bodyOffset: 0)
        _ = machine.appendedToMemory([1, 2, 3])
        #expect(machine.addWaiter(1, for: .data(after: 3), 1) == nil)
        #expect(machine.failed(FakeOriginError(url: "x")) == [1])
        guard case .fail = machine.read(at: 0, maxCount: 10) else {
            Issue.record("expected failure")
            return
        }
        // A waiter arriving later is handed back at once, to find the failure.
        #expect(machine.addWaiter(2, for: .data(after: 0), 2) == 2)
    }

    @Test func cancelledWaiterIsRemoved() {
        var machine = FlightStateMachine<Int>()
        #expect(machine.addWaiter(7, for: .head, 7) == nil)
        #expect(machine.removeWaiter(7) == 7)
        #expect(machine.headArrived(Self.head, file: nil, bodyOffset: 0).isEmpty)
    }

    @Test func bytesAfterAFileFailureComeFromMemory() throws {
        let directory = CacheDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let operations = PosixFileOperations()
        let path = directory.path + "/f"
        let descriptor = try operations.open(path, flags: O_RDWR | O_CREAT, mode: 0o644)
        let file = OpenFile(descriptor: descriptor, operations: operations)
        try operations.writeAll(descriptor, [9, 9, 1, 2], at: 0)  // a 2-byte "header", then the body

        var machine = FlightStateMachine<Int>()
        _ = machine.headArrived(Self.head, file: file, bodyOffset: 2)
        _ = machine.appendedToFile(2)
        _ = machine.appendedToMemory([3, 4])
        guard case .readFile(_, let offset, let count) = machine.read(at: 0, maxCount: 10) else {
            Issue.record("expected a file read")
            return
        }
        #expect(offset == 2 && count == 2)
        #expect(try file.read(count: count, at: offset) == [1, 2])
        guard case .bytes(let rest) = machine.read(at: 2, maxCount: 10) else {
            Issue.record("expected memory bytes")
            return
        }
        #expect(rest == [3, 4])
    }
}
