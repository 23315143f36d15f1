import Glibc
import Synchronization

/// Whether this cache has had its directory to itself: no other instance (another process, or another
/// `SegmentCache` in this one) has been open on it since this one began to watch.
///
/// Every open instance creates its lock file in `<root>/tmp` (``TemporaryArea``). An inotify watch on that directory,
/// set before the open's sweep lists the instances alive and before the index is built, sees every lock file created
/// after that; the sweep sees those created before. Once another instance is seen, the directory is shared for the
/// rest of this instance's life (an instance that has come and gone may have left entries the index lacks).
///
/// While the directory is not shared and the index was built from it completely, a key the index does not hold has
/// no entry file, so a miss needs no `open` of its path (nginx's cache does the same once its loader is done). That
/// `open` fails in the kernel's directory lookup: about 50 µs on the development VM after 50 ms of idle, the largest
/// step of a cold miss before its origin request (`bench/PROFILES.md`).
///
/// The watch sees only this kernel's changes: two hosts sharing a network file system see each other's entries on the
/// janitor's rescan (``SegmentCache/Configuration/rescanInterval``), or at once with inotify unavailable, which makes
/// every directory count as shared.
final class InstanceWatch: Sendable {
    private struct State {
        var shared: Bool
    }

    /// The inotify descriptor, or -1 when the directory counts as shared from the start.
    private let descriptor: CInt
    /// This instance's lock file name, the one creation not to count.
    private let ownLockName: String?
    private let state: Mutex<State>

    /// Starts watching `directory` (the cache's `tmp`). With no writable directory (`ownLockName` `nil`) or no inotify,
    /// the directory counts as shared.
    init(directory: String, ownLockName: String?) {
        var descriptor: CInt = -1
        if ownLockName != nil {
            descriptor = inotify_init1(CInt(IN_NONBLOCK | IN_CLOEXEC))
            let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF)
            if descriptor >= 0, inotify_add_watch(descriptor, directory, mask) < 0 {
                Glibc.close(descriptor)
                descriptor = -1
            }
        }
        self.descriptor = descriptor
        self.ownLockName = ownLockName
        self.state = Mutex(State(shared: descriptor < 0))
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    /// Notes that another instance was found alive: the directory is shared from now on.
    func markShared() {
        state.withLock { $0.shared = true }
    }

    /// Whether no other instance has been seen; reads the lock files created since the last call first.
    /// - Returns: `(alone, becameShared)`: `becameShared` when this call is the one that saw the first other instance.
    func check() -> (alone: Bool, becameShared: Bool) {
        state.withLock { state in
            guard !state.shared else { return (false, false) }
            if Self.drain(descriptor, ownLockName: ownLockName) {
                state.shared = true
                return (false, true)
            }
            return (true, false)
        }
    }

    /// Reads every pending event; whether one is another instance's lock file, a lost event or the directory gone.
    private static func drain(_ descriptor: CInt, ownLockName: String?) -> Bool {
        // Room for at least one event with the longest name; most calls find nothing to read.
        withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 8) { buffer in
            var sawOther = false
            while true {
                let count = read(descriptor, buffer.baseAddress, buffer.count)
                if count < 0 {
                    if errno == EINTR { continue }
                    // EAGAIN: nothing more. Anything else: the watch can no longer be trusted.
                    return sawOther || errno != EAGAIN
                }
                // A read of an inotify descriptor returns whole events only.
                guard count > 0 else { return true }
                if events(in: UnsafeRawBufferPointer(rebasing: buffer[..<count]), ownLockName: ownLockName) {
                    sawOther = true
                }
            }
        }
    }

    /// Whether the events in `bytes` include another instance's lock file, a lost event or the directory gone.
    static func events(in bytes: UnsafeRawBufferPointer, ownLockName: String?) -> Bool {
        let headerLength = MemoryLayout<inotify_event>.size
        let lost = UInt32(IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)
        var offset = 0
        while offset + headerLength <= bytes.count {
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let nameLength = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + headerLength
            guard nameLength <= bytes.count - nameStart else { return true }
            if mask & lost != 0 { return true }
            // The name is padded with NULs to an alignment.
            let name = bytes[nameStart..<(nameStart + nameLength)].prefix { $0 != 0 }
            if name.count > 5, name.suffix(5).elementsEqual(".lock".utf8),
                !name.elementsEqual((ownLockName ?? "").utf8)
            {
                return true
            }
            offset = nameStart + nameLength
        }
        return false
    }
}
