import Foundation
import Glibc
import Synchronization

/// This process's corner of `<root>/tmp`: an instance lock held with `flock`, and names for fills' temporary files.
///
/// Every open cache creates `<instance>.lock` and holds an exclusive `flock` on it until it closes or
/// dies; its temporary files are `<instance>.<n>.part`. A sweep removes the files of every instance
/// whose lock it can take, which is exactly the instances whose process is gone (the kernel drops a
/// dead process's locks), so a sweep never removes a live fill's file, in this process or another.
final class TemporaryArea: Sendable {
    /// `<root>/tmp`.
    let directory: String
    /// `<pid>-<random>`: unique among the instances sharing the directory.
    let instance: String
    private let lockPath: String
    private let lock: OpenFile
    private let sequence = Atomic<UInt64>(0)

    /// Creates the directory if needed, and the instance lock.
    /// - Throws: ``SystemError`` when the directory is not writable.
    init(directory: String, operations: any FileOperations) throws(SystemError) {
        try operations.makeDirectory(directory)
        let instance = "\(getpid())-\(String(UInt64.random(in: 1...UInt64.max), radix: 16))"
        let lockPath = "\(directory)/\(instance).lock"
        let descriptor = try operations.open(lockPath, flags: O_RDWR | O_CREAT | O_EXCL, mode: 0o644)
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let error = SystemError.current("flock", path: lockPath)
            operations.close(descriptor)
            try? operations.unlink(lockPath)
            throw error
        }
        self.directory = directory
        self.instance = instance
        self.lockPath = lockPath
        self.lock = OpenFile(descriptor: descriptor, operations: operations)
    }

    /// The name of this instance's lock file in ``directory``.
    var lockName: String { "\(instance).lock" }

    /// A fresh path for a fill's temporary file.
    func makePath() -> String {
        "\(directory)/\(instance).\(sequence.add(1, ordering: .relaxed).newValue).part"
    }

    /// Removes the instance lock file; call when no fill is left. The lock itself goes with the descriptor.
    func removeLockFile() {
        try? lock.operations.unlink(lockPath)
    }

    /// What a sweep did and found.
    struct SweepResult {
        /// Files removed.
        var removed = 0
        /// Removals that failed.
        var failures: [SystemError] = []
        /// Other instances found alive.
        var liveInstances = 0
    }

    /// Removes the files of every instance that is not alive, that is, whose lock can be taken.
    /// - Returns: how many files were removed, the removals that failed, and how many other instances are alive.
    static func sweep(directory: String, except live: String?) -> SweepResult {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return SweepResult() }
        var verdicts: [String: Bool] = [:]  // instance → dead
        var heldLocks: [String: CInt] = [:]
        var removed = 0
        var failures: [SystemError] = []
        defer { for descriptor in heldLocks.values { Glibc.close(descriptor) } }
        for name in names where name.hasSuffix(".part") {
            let instance = String(name.prefix { $0 != "." })
            guard instance != live else { continue }
            if verdicts[instance] == nil {
                let (dead, descriptor) = probe("\(directory)/\(instance).lock")
                verdicts[instance] = dead
                if let descriptor { heldLocks[instance] = descriptor }
            }
            guard verdicts[instance] == true else { continue }
            if Glibc.unlink("\(directory)/\(name)") == 0 {
                removed += 1
            } else if errno != ENOENT {
                failures.append(.current("unlink", path: "\(directory)/\(name)"))
            }
        }
        for name in names where name.hasSuffix(".lock") {
            let instance = String(name.dropLast(5))
            guard instance != live else { continue }
            if verdicts[instance] == nil {
                let (dead, descriptor) = probe("\(directory)/\(name)")
                verdicts[instance] = dead
                if let descriptor { heldLocks[instance] = descriptor }
            }
            // Unlinked while still locked by us, so no other sweeper can take it for a live one.
            if verdicts[instance] == true, Glibc.unlink("\(directory)/\(name)") == 0 { removed += 1 }
        }
        let liveInstances = verdicts.filter { $0.key != live && !$0.value }.count
        return SweepResult(removed: removed, failures: failures, liveInstances: liveInstances)
    }

    /// Whether the instance owning the lock file at `path` is dead; when it is and the file exists,
    /// the descriptor holding its lock, to close after its files are gone.
    private static func probe(_ path: String) -> (dead: Bool, lock: CInt?) {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return (errno == ENOENT, nil) }
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return (true, descriptor) }
        Glibc.close(descriptor)
        return (false, nil)
    }
}
