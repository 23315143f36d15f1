import CCurl
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The processors a thread may run on, and binding a thread to one of them: how a server keeps each of its event
/// loops and the origin-client thread that loop hands its fetches to (``OriginClient/setHomeWorker(_:)``) on one
/// core, so that neither wakes the other across cores.
public enum ProcessorAffinity {
    /// A thread could not be bound to a processor.
    public struct BindingError: Error, CustomStringConvertible {
        /// The processor asked for.
        public let processor: Int
        /// The error number `sched_setaffinity` gave.
        public let code: Int32

        /// What failed and what to check.
        public var description: String {
            "could not bind a thread to processor \(processor) (\(String(cString: strerror(code)))): "
                + "is it in the process's CPU set?"
        }
    }

    /// The processors in the calling thread's affinity mask, in increasing order; empty when it cannot be read.
    public static func allowed() -> [Int] {
        var processors = [Int32](repeating: 0, count: 1024)
        let count = processors.withUnsafeMutableBufferPointer { hlscache_affinity_list($0.baseAddress, 1024) }
        guard count > 0 else { return [] }
        return processors.prefix(Int(min(count, 1024))).map(Int.init)
    }

    /// How many processors the process may use: its affinity mask's, fewer when its cgroup has a CPU quota.
    public static var usableCount: Int { UsableProcessors.count }

    /// Gives every thread of the process that `keeps` does not name the mask `processors` again when it has another: a thread inherits the affinity of the thread that starts it, so a pool thread (the
    /// concurrency pool's, the disk's) started from a bound event loop would otherwise stay on that loop's processor.
    /// - Parameters:
    ///   - processors: the mask unbound threads have (the process's, ``allowed()`` before any binding).
    ///   - keeps: whether the thread of that kernel id and name (`comm`, at most 15 bytes) is bound on purpose.
    /// - Returns: how many threads were given the mask again.
    @discardableResult
    public static func unbindStrayThreads(
        to processors: [Int], keeping keeps: (_ tid: Int32, _ name: String) -> Bool
    ) -> Int {
        guard !processors.isEmpty,
            let tids = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        else { return 0 }
        let wanted = processors.map(Int32.init)
        var unbound = 0
        for tid in tids.compactMap(Int32.init) {
            let name = (try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8)) ?? ""
            if keeps(tid, name.trimmingCharacters(in: .newlines)) { continue }
            var mask = [Int32](repeating: 0, count: 1024)
            let count = mask.withUnsafeMutableBufferPointer { hlscache_thread_affinity_list(tid, $0.baseAddress, 1024) }
            guard count > 0, Array(mask.prefix(Int(min(count, 1024)))) != wanted else { continue }
            if wanted.withUnsafeBufferPointer({ hlscache_set_thread_affinity(tid, $0.baseAddress, Int32($0.count)) })
                == 0
            {
                unbound += 1
            }
        }
        return unbound
    }

    /// The kernel id of the calling thread (as listed in /proc/self/task), or `nil` when it cannot be read.
    public static var currentThreadID: Int32? {
        guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self") else {
            return nil
        }
        return link.split(separator: "/").last.flatMap { Int32($0) }
    }

    /// Binds the calling thread to `processor`.
    /// - Throws: ``BindingError`` when the kernel refuses (a processor outside the process's CPU set).
    public static func bindCurrentThread(to processor: Int) throws(BindingError) {
        let code = hlscache_bind_current_thread(Int32(clamping: processor))
        guard code == 0 else { throw BindingError(processor: processor, code: code) }
    }
}

/// The worker of an ``OriginClient`` that fetches started on the calling thread go to: a thread-specific value,
/// set by ``OriginClient/setHomeWorker(_:)``.
enum HomeWorker {
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        _ = pthread_key_create(&key, nil)
        return key
    }()

    /// The calling thread's home worker index, if it has one.
    static var current: Int? {
        let stored = Int(bitPattern: pthread_getspecific(key))
        return stored == 0 ? nil : stored - 1
    }

    /// Sets (or clears, with `nil`) the calling thread's home worker index.
    static func set(_ index: Int?) {
        let stored = index.map { max(0, $0) + 1 } ?? 0
        _ = pthread_setspecific(key, UnsafeRawPointer(bitPattern: stored))
    }
}
