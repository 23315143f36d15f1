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
/// `open` fails in the kernel's directory lookup, after an idle spell the largest step of a cold miss before its
/// origin request (`bench/PROFILES.md`).
///
/// The watch sees only this kernel's changes: two hosts sharing a network file system see each other's entries on the
/// janitor's rescan (``SegmentCache/Configuration/rescanInterval``). Without inotify (or past the user's limit of
/// watches), every directory counts as shared, as before the watch existed.
final class InstanceWatch: Sendable {
    private struct State {
        var shared: Bool
        /// The watch in ``LockFileWatcher/shared``, until ``stop()``.
        var watch: LockFileWatcher.Watch?
    }

    private let ownLockName: String
    private let state: Mutex<State>

    /// Starts watching `directory` (the cache's `tmp`). With no writable directory (`ownLockName` `nil`) or no watch,
    /// the directory counts as shared.
    init(directory: String, ownLockName: String?) {
        let watch = ownLockName.flatMap { _ in LockFileWatcher.shared.add(directory) }
        self.ownLockName = ownLockName ?? ""
        self.state = Mutex(State(shared: watch == nil, watch: watch))
    }

    deinit {
        stop()
    }

    /// Notes that another instance was found alive: the directory is shared from now on.
    func markShared() {
        state.withLock { $0.shared = true }
    }

    /// Whether no other instance has been seen; reads the lock files created since the last call first.
    /// - Returns: `(alone, becameShared)`: `becameShared` when this call is the one that saw the first other instance.
    func check() -> (alone: Bool, becameShared: Bool) {
        state.withLock { state in
            guard !state.shared, let watch = state.watch else { return (false, false) }
            guard LockFileWatcher.shared.sawOtherLock(since: watch, than: ownLockName) else { return (true, false) }
            state.shared = true
            return (false, true)
        }
    }

    /// Ends the watch (the cache is closed): the directory counts as shared from now on.
    func stop() {
        let watch = state.withLock { state in
            defer { (state.shared, state.watch) = (true, nil) }
            return state.watch
        }
        if let watch { LockFileWatcher.shared.remove(watch) }
    }
}

/// The process's one inotify descriptor, with a watch per watched directory shared by the caches on it: inotify
/// instances are few (128 per user by default), watches many.
final class LockFileWatcher: Sendable {
    /// What one watch has seen.
    private struct Watched {
        /// The caches using it.
        var users = 1
        /// The lock files created in its directory since it began, in order.
        var locks: [String] = []
        /// An event was lost, or the directory went: anything may have happened.
        var lost = false
    }

    private struct State {
        /// -1 until the first watch, and when inotify is not available.
        var descriptor: CInt = -1
        var watches: [CInt: Watched] = [:]
    }

    /// The process's watcher.
    static let shared = LockFileWatcher()

    /// The most lock names kept per watch; past it the watch counts as lost.
    static let lockNameLimit = 256

    private let state = Mutex(State())

    /// One cache's use of a watch: its descriptor, and how many lock files it had seen when the cache came.
    struct Watch: Sendable {
        let descriptor: CInt
        let start: Int
    }

    /// Watches `directory` for created files; `nil` when inotify cannot watch it.
    func add(_ directory: String) -> Watch? {
        state.withLock { state in
            if state.descriptor < 0 {
                state.descriptor = inotify_init1(CInt(IN_NONBLOCK | IN_CLOEXEC))
                guard state.descriptor >= 0 else { return nil }
            }
            let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF)
            let watch = inotify_add_watch(state.descriptor, directory, mask)
            guard watch >= 0 else { return nil }
            // The same directory watched twice is one watch: what it recorded before this cache came is not this
            // cache's. (Events still unread count for both: at worst a cache counts as shared for a lock file made
            // just before it opened, which its sweep sees anyway.)
            if var watched = state.watches[watch] {
                watched.users += 1
                state.watches[watch] = watched
                return Watch(descriptor: watch, start: watched.locks.count)
            }
            state.watches[watch] = Watched()
            return Watch(descriptor: watch, start: 0)
        }
    }

    /// Lets go of a watch from ``add(_:)``; the last user removes it.
    func remove(_ use: Watch) {
        let watch = use.descriptor
        state.withLock { state in
            guard var watched = state.watches[watch] else { return }
            watched.users -= 1
            if watched.users > 0 {
                state.watches[watch] = watched
            } else {
                state.watches[watch] = nil
                _ = inotify_rm_watch(state.descriptor, watch)
            }
        }
    }

    /// Whether a lock file other than `ownLockName` was created in the watch's directory since `use` began, or an
    /// event was lost.
    func sawOtherLock(since use: Watch, than ownLockName: String) -> Bool {
        state.withLock { state in
            Self.drain(&state)
            guard let watched = state.watches[use.descriptor] else { return true }
            return watched.lost || watched.locks.dropFirst(use.start).contains { $0 != ownLockName }
        }
    }

    /// Reads every pending event into the watches.
    private static func drain(_ state: inout State) {
        // Room for at least one event with the longest name; most calls find nothing to read.
        withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 8) { buffer in
            while true {
                let count = read(state.descriptor, buffer.baseAddress, buffer.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else {
                    // EAGAIN: nothing more. Anything else: no watch can be trusted any more.
                    if count == 0 || errno != EAGAIN {
                        for watch in state.watches.keys { state.watches[watch]?.lost = true }
                    }
                    return
                }
                for event in events(in: UnsafeRawBufferPointer(rebasing: buffer[..<count])) {
                    record(event, in: &state)
                }
            }
        }
    }

    private static func record(_ event: Event, in state: inout State) {
        switch event {
        case .lost(nil):
            for watch in state.watches.keys { state.watches[watch]?.lost = true }
        case .lost(let watch?):
            state.watches[watch]?.lost = true
        case .lockCreated(let watch, let name):
            guard var watched = state.watches[watch] else { return }
            if watched.locks.count < lockNameLimit {
                watched.locks.append(name)
            } else {
                watched.lost = true
            }
            state.watches[watch] = watched
        }
    }

    /// What an inotify event means here.
    enum Event: Equatable {
        /// A file whose name ends in `.lock` appeared in the watch's directory.
        case lockCreated(watch: CInt, name: String)
        /// Events were lost (no watch named), or the watch's directory went.
        case lost(watch: CInt?)
    }

    /// The events in `bytes` that matter: lock files created, events lost, directories gone; others (fills'
    /// temporary files) are left out. A truncated event counts as events lost.
    static func events(in bytes: UnsafeRawBufferPointer) -> [Event] {
        let headerLength = MemoryLayout<inotify_event>.size
        let gone = UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)
        var events: [Event] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= headerLength else { return events + [.lost(watch: nil)] }
            let watch = bytes.loadUnaligned(fromByteOffset: offset, as: CInt.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let nameLength = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameStart = offset + headerLength
            guard nameLength <= bytes.count - nameStart else { return events + [.lost(watch: nil)] }
            offset = nameStart + nameLength
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                events.append(.lost(watch: nil))
            } else if mask & gone != 0 {
                events.append(.lost(watch: watch))
            } else {
                // The name is padded with NULs to an alignment.
                let name = bytes[nameStart..<offset].prefix { $0 != 0 }
                if name.count > 5, name.suffix(5).elementsEqual(".lock".utf8) {
                    events.append(.lockCreated(watch: watch, name: String(decoding: name, as: UTF8.self)))
                }
            }
        }
        return events
    }
}
