import Foundation
import Glibc
import NIOPosix
import Synchronization

/// Where log lines go: a file descriptor (standard output) written by a thread of its own, the only one that calls
/// `write(2)` on it, so that logging one line per request never makes a response wait on the descriptor.
///
/// - ``append(_:)`` (lines of `info` and below: the access log) adds the line to a buffer and wakes the writer, which
///   waits a moment for more lines and writes them in one `write(2)`. While the descriptor does not keep up (a full
///   pipe nobody reads), the buffer grows to its bound (16 MiB); lines past it are dropped and counted, and a line
///   saying how many goes out once the descriptor takes bytes again.
/// - ``write(_:)`` (warnings and errors) queues the line the same way and wakes the writer at once, with no wait
///   for more lines: it goes out within microseconds, after the lines before it, and no caller ever waits for it.
/// - ``flush()`` waits until what is queued is written, at most a second (at exit).
final class LogOutput: Sendable {
    /// The process's standard output.
    static let standardOutput = LogOutput(descriptor: STDOUT_FILENO)

    /// How long the writer waits after being woken for an ordinary line, for more to go in the same `write(2)`.
    static let coalescing: TimeInterval = 0.001

    private struct Buffer {
        var bytes: [UInt8] = []
        var dropped = 0
        /// Lines queued since the start.
        var queued: UInt64 = 0
        /// Whether a line waits to be written at once.
        var urgent = false
    }

    private let destination: Destination
    private let maxBufferedBytes: Int
    private let buffer = Mutex(Buffer())
    /// Lines written (or given up on: a descriptor that fails) since the start.
    private let written = Atomic<UInt64>(0)
    private let wake = DispatchSemaphore(value: 0)

    /// Where the writer thread puts batches of lines.
    private enum Destination: Sendable {
        /// A file descriptor, not closed by this object.
        case descriptor(CInt)
        /// A function of the owner's (a server run inside a test process keeps its lines).
        case lines(@Sendable ([UInt8]) -> Void)
    }

    /// Lines written to `descriptor` (not closed by this object, whose writer thread lives as long as the process).
    /// - Parameters:
    ///   - descriptor: where lines go.
    ///   - maxBufferedBytes: the most bytes queued while the descriptor does not keep up.
    convenience init(descriptor: CInt, maxBufferedBytes: Int = 16 << 20) {
        self.init(destination: .descriptor(descriptor), maxBufferedBytes: maxBufferedBytes)
    }

    /// Lines handed to `lines`, in batches of whole lines, from the writer thread (which lives as long as the
    /// process).
    /// - Parameter lines: takes each batch.
    convenience init(lines: @escaping @Sendable ([UInt8]) -> Void) {
        self.init(destination: .lines(lines), maxBufferedBytes: 16 << 20)
    }

    private init(destination: Destination, maxBufferedBytes: Int) {
        self.destination = destination
        self.maxBufferedBytes = maxBufferedBytes
        let thread = Thread { [self] in self.run() }
        thread.name = "hlscache-log"
        thread.start()
    }

    /// Queues `line` (with its newline) for the writer thread.
    func append(_ line: String) {
        _ = enqueue(line, urgent: false)
    }

    /// Queues the bytes of a line (with its newline) for the writer thread.
    func append(bytes line: [UInt8]) {
        _ = enqueue(line, urgent: false)
    }

    /// Queues `line` to be written at once.
    func write(_ line: String) {
        _ = enqueue(line, urgent: true)
    }

    /// Waits until what is queued now is written, at most a second.
    func flush() {
        let queued = buffer.withLock { buffer in
            buffer.urgent = true
            return buffer.queued
        }
        wake.signal()
        wait(until: queued, atMost: .seconds(1))
    }

    /// Adds `line` to the buffer (or counts it dropped, past the bound) and wakes the writer when it needs waking.
    /// - Returns: the line's number, for ``wait(until:atMost:)``.
    private func enqueue(_ line: String, urgent: Bool) -> UInt64 {
        var line = line
        return line.withUTF8 { enqueue($0, urgent: urgent) }
    }

    private func enqueue(_ line: [UInt8], urgent: Bool) -> UInt64 {
        line.withUnsafeBufferPointer { enqueue($0, urgent: urgent) }
    }

    private func enqueue(_ line: UnsafeBufferPointer<UInt8>, urgent: Bool) -> UInt64 {
        let (number, signal) = buffer.withLock { buffer -> (UInt64, Bool) in
            let wasIdle = buffer.bytes.isEmpty && !buffer.urgent
            if buffer.bytes.count + line.count > maxBufferedBytes {
                buffer.dropped += 1
                return (buffer.queued, false)
            }
            buffer.bytes.append(contentsOf: line)
            buffer.queued += 1
            let wasUrgent = buffer.urgent
            buffer.urgent = buffer.urgent || urgent
            return (buffer.queued, wasIdle || (urgent && !wasUrgent))
        }
        if signal { wake.signal() }
        return number
    }

    private func wait(until number: UInt64, atMost limit: Duration) {
        let deadline = ContinuousClock.now + limit
        while written.load(ordering: .acquiring) < number, ContinuousClock.now < deadline {
            usleep(50)
        }
    }

    /// The most capacity a batch buffer keeps between batches (what a burst grew it to beyond this is freed).
    static let keptBatchCapacity = 256 << 10

    private func run() {
        // Two buffers take turns: the writer writes one while lines go into the other, and each keeps its
        // capacity, so that queueing a line seldom allocates (an empty buffer per batch regrew, under the lock,
        // by doubling from nothing each time).
        var batch: [UInt8] = []
        while true {
            wake.wait()
            if !buffer.withLock({ $0.urgent }) { Thread.sleep(forTimeInterval: Self.coalescing) }
            let number = take(into: &batch)
            writeAll(batch)
            written.store(number, ordering: .releasing)
            if batch.capacity > Self.keptBatchCapacity { batch = [] } else { batch.removeAll(keepingCapacity: true) }
        }
    }

    /// Swaps the queued bytes into `batch` (empty), with a line about dropped ones first, and returns the number of
    /// the last line among them; the queue is left with `batch`'s old storage, empty.
    private func take(into batch: inout [UInt8]) -> UInt64 {
        let (dropped, number) = buffer.withLock { buffer in
            swap(&buffer.bytes, &batch)
            defer {
                buffer.dropped = 0
                buffer.urgent = false
            }
            return (buffer.dropped, buffer.queued)
        }
        guard dropped > 0 else { return number }
        let notice = "\(LogTimestamp.now()) warning log output is not keeping up: \(dropped) lines dropped\n"
        batch.insert(contentsOf: notice.utf8, at: 0)
        return number
    }

    // Not inlined into the writer thread's endless loop: inlined there, the optimizer's loop-invariant code motion
    // took over twenty minutes on it (a release build of the server).
    @inline(never)
    private func writeAll(_ bytes: [UInt8]) {
        let descriptor: CInt
        switch destination {
        case .descriptor(let number): descriptor = number
        case .lines(let take):
            if !bytes.isEmpty { take(bytes) }
            return
        }
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if count < 0 {
                if errno == EINTR { continue }
                return  // a closed or broken output: nothing more can be said there
            }
            offset += count
        }
    }
}

/// Log timestamps, `2026-11-21T03:05:01.537Z` (ISO 8601, UTC, milliseconds), made without a formatter.
enum LogTimestamp {
    /// The time now.
    static func now() -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// One thread's `YYYY-MM-DDTHH:MM:SS.` for the current second: made at most once a second per thread, not once
    /// per access line (`gmtime_r` and its digits showed in the event loops' profile).
    private final class ThreadSecond: @unchecked Sendable {
        var second = Int64.min
        var prefix: [UInt8] = []
    }

    private static let threadSeconds = ThreadSpecificVariable<ThreadSecond>()

    /// Appends the time now to `bytes`.
    static func append(to bytes: inout [UInt8]) {
        let now = Date().timeIntervalSince1970
        let whole = now.rounded(.down)
        let milliseconds = min(999, Int((now - whole) * 1000))
        let cached = threadSeconds.current(orMake: ThreadSecond.init)
        if cached.second != Int64(whole) {
            cached.second = Int64(whole)
            cached.prefix = secondPrefix(time_t(whole))
        }
        bytes.append(contentsOf: cached.prefix)
        bytes.appendDigits(milliseconds, width: 3)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// `YYYY-MM-DDTHH:MM:SS.` of `seconds` since the epoch, in UTC.
    static func secondPrefix(_ seconds: time_t) -> [UInt8] {
        var seconds = seconds
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        bytes.appendDigits(Int(parts.tm_year) + 1900, width: 4)
        bytes.append(UInt8(ascii: "-"))
        bytes.appendDigits(Int(parts.tm_mon) + 1, width: 2)
        bytes.append(UInt8(ascii: "-"))
        bytes.appendDigits(Int(parts.tm_mday), width: 2)
        bytes.append(UInt8(ascii: "T"))
        bytes.appendDigits(Int(parts.tm_hour), width: 2)
        bytes.append(UInt8(ascii: ":"))
        bytes.appendDigits(Int(parts.tm_min), width: 2)
        bytes.append(UInt8(ascii: ":"))
        bytes.appendDigits(Int(parts.tm_sec), width: 2)
        bytes.append(UInt8(ascii: "."))
        return bytes
    }
}
