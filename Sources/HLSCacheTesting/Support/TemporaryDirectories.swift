import Foundation
import Synchronization

/// The temporary directories a test process made (``ServerProcess/temporaryDirectory()``), removed when it exits.
///
/// Tests hand a directory from one server to the next (a restart, a second node), so none is removed when one
/// server stops; without this, each run of the suite left about 175 of them behind, 14 GB after a day's work here.
enum TemporaryDirectories {
    private static let made = Mutex<[String]>([])

    /// Registers the removal at exit, once.
    private static let removalAtExit: Void = {
        atexit { TemporaryDirectories.removeAll() }
    }()

    /// Notes `path` for removal when the process exits.
    static func register(_ path: String) {
        _ = removalAtExit
        made.withLock { $0.append(path) }
    }

    /// Removes every directory registered so far.
    static func removeAll() {
        let paths = made.withLock { made in
            defer { made.removeAll() }
            return made
        }
        for path in paths { try? FileManager.default.removeItem(atPath: path) }
    }
}
