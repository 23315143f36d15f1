import CSpawn
import Glibc
import Synchronization

/// A program started with `posix_spawn`, its standard input, output and error on pipes: what ``ChildProcess`` runs.
///
/// Not Foundation's `Process`: its `run()` lists `/proc/self/fd` to close every descriptor in the child, and read
/// past the end of its buffer (a crash of the whole test process) when a test held some 1,300 descriptors open.
/// Here the child closes every descriptor above standard error itself (`posix_spawn_file_actions_addclosefrom_np`),
/// whatever this process holds, and starts with no blocked signal and every signal's default action.
public final class SpawnedProcess: Sendable {
    /// The child's process id.
    public let processIdentifier: pid_t
    /// The read end of the child's standard output.
    let output: CInt
    /// The read end of the child's standard error, or `nil` when it goes to the output.
    let errors: CInt?
    /// The write end of the child's standard input.
    let input: CInt
    /// The raw wait status, once the child is reaped.
    private let waitStatus = Mutex<CInt?>(nil)

    /// The program could not be started.
    public struct LaunchError: Error, CustomStringConvertible {
        /// The program.
        public let executable: String
        /// The `errno` value `posix_spawn` or `pipe2` returned.
        public let code: CInt

        /// Names the program and the system's reason.
        public var description: String { "cannot start \(executable): \(String(cString: strerror(code)))" }
    }

    /// Starts `executable` (a path) with `arguments` and `environment`.
    /// - Parameter mergeErrors: send standard error to the output pipe.
    /// - Throws: ``LaunchError``.
    init(_ executable: String, _ arguments: [String], environment: [String: String], mergeErrors: Bool) throws {
        let stdin = try Self.pipe(executable)
        let stdout = try Self.pipe(executable)
        let stderr = mergeErrors ? stdout : try Self.pipe(executable)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout.write, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr.write, 2)
        hlscache_spawn_close_from(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            (envp + [nil]).withUnsafeBufferPointer { envpBuffer in
                posix_spawn(
                    &pid, executable, &actions, &attributes, UnsafeMutablePointer(mutating: argvBuffer.baseAddress!),
                    UnsafeMutablePointer(mutating: envpBuffer.baseAddress!))
            }
        }
        // The child's ends are the child's alone now.
        close(stdin.read)
        close(stdout.write)
        if !mergeErrors { close(stderr.write) }
        guard result == 0 else {
            close(stdin.write)
            close(stdout.read)
            if !mergeErrors { close(stderr.read) }
            throw LaunchError(executable: executable, code: result)
        }
        processIdentifier = pid
        output = stdout.read
        errors = mergeErrors ? nil : stderr.read
        input = stdin.write
    }

    private static func pipe(_ executable: String) throws -> (read: CInt, write: CInt) {
        var ends: [CInt] = [0, 0]
        guard hlscache_pipe2(&ends, O_CLOEXEC) == 0 else { throw LaunchError(executable: executable, code: errno) }
        return (ends[0], ends[1])
    }

    /// Sends SIGTERM.
    public func terminate() {
        kill(processIdentifier, SIGTERM)
    }

    /// Whether it is still running (it is reaped, and its status kept, once it has exited).
    public var isRunning: Bool { waitStatus.withLock { reap(&$0) } == nil }

    /// Waits (blocking, without holding the lock ``isRunning`` takes) until it has exited.
    public func waitUntilExit() {
        var info = siginfo_t()
        while waitStatus.withLock({ $0 }) == nil {
            // Waits for the exit without reaping it; the reaping is under the lock.
            let result = waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT)
            if result == -1 && errno == EINTR { continue }
            _ = isRunning
            if result == -1 { return }
        }
    }

    /// The exit status, or the signal number when a signal ended it; call it after ``waitUntilExit()``.
    public var terminationStatus: CInt {
        guard let status = waitStatus.withLock({ $0 }) else { return -1 }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
    }

    /// Reaps the child once, without waiting; the wait status, `nil` while it runs.
    private func reap(_ status: inout CInt?) -> CInt? {
        if let status { return status }
        var raw: CInt = 0
        while true {
            let result = waitpid(processIdentifier, &raw, WNOHANG)
            if result == -1 && errno == EINTR { continue }
            if result == processIdentifier { status = raw }
            // 0: still running; -1 (ECHILD): not ours to wait for any more, which never happens here.
            return status
        }
    }
}
