import Glibc
import Synchronization

@testable import SegmentCache

/// The real file layer, with failures the tests switch on: a full disk after N bytes, an unwritable
/// directory, a failing rename.
final class FaultyFileOperations: FileOperations {
    struct Faults: Sendable {
        /// Writes fail with `writeErrno` once this many bytes have been written through the layer.
        var failWritesAfterBytes: Int?
        var writeErrno: CInt = ENOSPC
        /// Opens that create a file fail with this `errno`.
        var failCreate: CInt?
        /// Renames fail with this `errno`.
        var failRename: CInt?
        /// This many writes at the start of a file (an entry's header) fail with `ENOSPC`, then they succeed.
        var fullDiskHeaderWrites = 0
    }

    private let real = PosixFileOperations()
    private let faults = Mutex(Faults())
    private let written = Atomic<Int>(0)
    private let synchronizeHold = ThreadHold()
    private let lookedUp = Mutex<[String]>([])
    private let renameHold = ThreadHold()
    private let missingLookup = Mutex<(@Sendable (String) -> Void)?>(nil)

    init() {}

    /// Bytes written through the layer since the last ``set(_:)``.
    var bytesWritten: Int { written.load(ordering: .relaxed) }

    /// Replaces the active faults and resets the byte count.
    func set(_ faults: Faults) {
        self.faults.withLock { $0 = faults }
        written.store(0, ordering: .relaxed)
    }

    /// The paths opened without `O_CREAT` (lookups of entries, snapshots and locks), in order.
    var pathsLookedUp: [String] { lookedUp.withLock { $0 } }

    /// Calls `body` with the path of each lookup (an open without `O_CREAT`) that finds no file, on the looking
    /// thread, before the lookup learns of it: what happens meanwhile is what the test wants the lookup not to see.
    func onMissingLookup(_ body: (@Sendable (String) -> Void)?) { missingLookup.withLock { $0 = body } }

    func open(_ path: String, flags: CInt, mode: mode_t) throws(SystemError) -> CInt {
        if flags & O_CREAT == 0 { lookedUp.withLock { $0.append(path) } }
        if flags & O_CREAT != 0, let code = faults.withLock({ $0.failCreate }) {
            throw SystemError(code: code, operation: "open", path: path)
        }
        do throws(SystemError) {
            return try real.open(path, flags: flags, mode: mode)
        } catch {
            if flags & O_CREAT == 0, error.code == ENOENT, let hook = missingLookup.withLock({ $0 }) { hook(path) }
            throw error
        }
    }

    func close(_ descriptor: CInt) { real.close(descriptor) }

    func space(at path: String) -> FileSystemSpace? { real.space(at: path) }

    func write(_ descriptor: CInt, _ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(SystemError) -> Int {
        let (limit, code, failsHeader) = faults.withLock { faults in
            let failsHeader = offset == 0 && faults.fullDiskHeaderWrites > 0
            if failsHeader { faults.fullDiskHeaderWrites -= 1 }
            return (faults.failWritesAfterBytes, faults.writeErrno, failsHeader)
        }
        if failsHeader { throw SystemError(code: ENOSPC, operation: "write", path: nil) }
        var count = bytes.count
        if let limit {
            let room = limit - written.load(ordering: .relaxed)
            if room <= 0 { throw SystemError(code: code, operation: "write", path: nil) }
            count = min(count, room)  // a short write, then the error on the next call
        }
        let done = try real.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[0..<count]), at: offset)
        written.add(done, ordering: .relaxed)
        return done
    }

    func read(
        _ descriptor: CInt, into buffer: UnsafeMutableRawBufferPointer, at offset: Int64
    ) throws(SystemError) -> Int {
        try real.read(descriptor, into: buffer, at: offset)
    }

    func size(of descriptor: CInt) throws(SystemError) -> Int64 { try real.size(of: descriptor) }

    /// While `hold` is set, `synchronize` blocks its caller's thread until it is cleared: a disk stalled on
    /// `fdatasync`.
    func holdSynchronize(_ hold: Bool) { synchronizeHold.set(hold) }

    /// How many `synchronize` calls are blocked by ``holdSynchronize(_:)`` now.
    var synchronizeWaiting: Int { synchronizeHold.waiting }

    func synchronize(_ descriptor: CInt) throws(SystemError) {
        synchronizeHold.pass()
        try real.synchronize(descriptor)
    }

    /// While `hold` is set, `rename` blocks its caller's thread until it is cleared: a fill whose entry is counted
    /// and not yet in place.
    func holdRename(_ hold: Bool) { renameHold.set(hold) }

    /// How many `rename` calls are blocked by ``holdRename(_:)`` now.
    var renameWaiting: Int { renameHold.waiting }

    func rename(_ source: String, to destination: String) throws(SystemError) {
        renameHold.pass()
        if let code = faults.withLock({ $0.failRename }) {
            throw SystemError(code: code, operation: "rename", path: destination)
        }
        try real.rename(source, to: destination)
    }

    func unlink(_ path: String) throws(SystemError) { try real.unlink(path) }

    func makeDirectory(_ path: String) throws(SystemError) { try real.makeDirectory(path) }

    func setModificationTime(_ path: String, milliseconds: Int64) throws(SystemError) {
        try real.setModificationTime(path, milliseconds: milliseconds)
    }
}

/// A switch that, while on, blocks each thread reaching ``pass()`` until it is turned off, counting them.
private final class ThreadHold: Sendable {
    private let held = Atomic<Bool>(false)
    private let waiters = Atomic<Int>(0)

    /// Turns the hold on or off.
    func set(_ hold: Bool) { held.store(hold, ordering: .sequentiallyConsistent) }

    /// How many threads it blocks now.
    var waiting: Int { waiters.load(ordering: .sequentiallyConsistent) }

    /// Returns at once when off; otherwise once it is turned off.
    func pass() {
        guard held.load(ordering: .sequentiallyConsistent) else { return }
        waiters.add(1, ordering: .sequentiallyConsistent)
        while held.load(ordering: .sequentiallyConsistent) { usleep(1_000) }
        waiters.subtract(1, ordering: .sequentiallyConsistent)
    }
}
