import Foundation
import Glibc
import HLSCacheServer
import Synchronization

/// Makes sure `hlscache serve` leaves once the server has stopped, whatever holds up the last steps (releasing the
/// server's objects, flushing the log): a CI run once saw the process still alive 15 s after it logged
/// `hlscache stopped`, with nothing left to do.
///
/// ``arm(after:)`` starts a thread that, if the process is still here when the time is up, writes one warning line
/// naming the step it was held up at straight to standard error and leaves with status 0 (the cache is already
/// closed and its index written). ``enter(_:)`` records each step as the exit path reaches it.
enum ExitWatchdog {
    /// A step of the exit path.
    enum Step: Int, CustomStringConvertible {
        case releasingServer = 1
        case flushingLog = 2
        case flushingStandardIO = 3

        var description: String {
            switch self {
            case .releasingServer: "releasing the server"
            case .flushingLog: "flushing the log"
            case .flushingStandardIO: "flushing standard I/O"
            }
        }
    }

    private static let step = Atomic<Int>(0)

    /// Records that the exit path has reached `step`.
    static func enter(_ step: Step) {
        self.step.store(step.rawValue, ordering: .releasing)
    }

    /// Starts the watchdog: after `seconds`, a process still running says so on standard error and exits 0.
    static func arm(after seconds: Double) {
        let thread = Thread {
            Thread.sleep(forTimeInterval: seconds)
            let held = Step(rawValue: step.load(ordering: .acquiring)).map(\.description) ?? "before the exit path"
            let line =
                "\(LogTimestamp.now()) warning the process had not exited \(seconds) s after the server "
                + "stopped (held up \(held)); exiting now\n"
            line.utf8CString.withUnsafeBufferPointer { bytes in
                _ = Glibc.write(STDERR_FILENO, bytes.baseAddress, bytes.count - 1)
            }
            _exit(0)
        }
        thread.name = "hlscache-exit"
        thread.start()
    }
}
