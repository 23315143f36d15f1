import NIOCore
import NIOPosix
import OriginCache
import OriginClient

/// Which processor each event loop, and the origin-client thread of the same number that the loop's fetches go to,
/// is bound to (`--cpu-affinity`).
///
/// A cold miss's first byte crosses threads four times: the request wakes a loop, the loop hands the origin request
/// to a curl thread, the origin's answer wakes that thread, and the answer's head wakes the loop again. On a machine
/// whose cores idle between requests, waking a thread on another core takes an interrupt between processors and a
/// core brought out of its idle state (on a VM, a trip through the hypervisor). Bound in pairs, a loop and its curl
/// thread wake each other on one core, as nginx's single worker process does; the measurements are in
/// `bench/PROFILES.md`.
///
/// `auto` binds when the process has one processor for each pair of its own: as many event loops (NIO's singleton
/// group, one per usable processor) as origin threads, as many processors in the process's affinity mask, and no CPU
/// quota below that. Otherwise (more cores than the four origin threads, `--origin-threads` set apart, a CPU quota,
/// one processor) nothing is bound and the scheduler places every thread, as it does with `off`. The loops are the
/// process's (NIO's singleton group): a second server started in the same process would bind them alike.
///
/// `off` is the default. A bound loop cannot leave its processor when another program keeps it busy (the players of a
/// lab or a CI farm, on the same machine): with a single-threaded HTTP/2 client on the same two processors, the loop
/// sharing the client's processor fell behind while the other waited (100 KiB hits over HTTP/2 at 0.86 of nginx's
/// rate bound, 0.95 unbound, in one run), against a cold miss's first byte some 0.07 ms sooner bound
/// (`bench/PROFILES.md`). nginx, too, binds its workers only when told to (`worker_cpu_affinity`).
struct ThreadPlacement: Sendable, Equatable {
    /// The processor of pair `i` (event loop `i`, origin thread `i`); empty when nothing is bound.
    let processors: [Int]
    /// Why nothing is bound, when nothing is.
    let unboundReason: String?

    /// What `mode` comes to for a process with `loops` event loops, `workers` origin threads, the processors of its
    /// affinity mask (`allowed`) and `usable` processors (fewer than `allowed` under a CPU quota).
    static func decide(
        mode: ServerConfiguration.CPUAffinity, loops: Int, workers: Int, allowed: [Int], usable: Int
    ) -> ThreadPlacement {
        func unbound(_ reason: String) -> ThreadPlacement { ThreadPlacement(processors: [], unboundReason: reason) }
        guard mode == .auto else { return unbound("--cpu-affinity off") }
        guard allowed.count >= 2 else { return unbound("one processor") }
        guard loops == workers else { return unbound("\(loops) event loops, \(workers) origin threads") }
        guard loops == allowed.count else {
            return unbound("\(loops) event loops, \(allowed.count) processors in the affinity mask")
        }
        guard usable >= allowed.count else {
            return unbound("a CPU quota of \(usable) processors for \(allowed.count) in the affinity mask")
        }
        return ThreadPlacement(processors: allowed, unboundReason: nil)
    }

    /// The placement for `configuration` in this process.
    static func current(for configuration: ServerConfiguration) -> ThreadPlacement {
        decide(
            mode: configuration.cpuAffinity,
            loops: Array(MultiThreadedEventLoopGroup.singleton.makeIterator()).count,
            workers: configuration.fill.originAccess.workerThreads ?? OriginClientConfiguration.defaultWorkerThreads,
            allowed: ProcessorAffinity.allowed(), usable: ProcessorAffinity.usableCount)
    }

    /// The names of the threads bound on purpose: the event loops (NIO's singleton group) and the origin threads.
    static let boundThreadPrefixes = ["NIO-SGLTN-", "hlscache-curl"]

    /// Gives the threads started from a bound one since (a concurrency pool thread started by a loop's task, the
    /// disk threads started by a loop's first fill) the process's whole mask again: they inherit their starter's
    /// processor otherwise, and two pool threads on one core halve the pool.
    /// - Returns: how many threads were unbound.
    @discardableResult
    func unbindStrayThreads() -> Int {
        guard !processors.isEmpty else { return 0 }
        return ProcessorAffinity.unbindStrayThreads(to: processors) { _, name in
            Self.boundThreadPrefixes.contains { name.hasPrefix($0) }
        }
    }

    /// For the log: the processors, or why none.
    var summary: String {
        processors.isEmpty
            ? "off (\(unboundReason ?? "not bound"))" : processors.map(String.init).joined(separator: ",")
    }

    /// Binds loop `i` of `loops` (NIO's singleton group's, by default) to processor `i` of ``processors`` and
    /// makes origin thread `i` its home (``OriginClient/setHomeWorker(_:)``); does nothing when nothing is to be
    /// bound.
    /// - Returns: the bindings the kernel refused, one line each (that loop is left where it was, with no home).
    func bindEventLoops(
        _ loops: [any EventLoop] = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
    ) async -> [String] {
        guard !processors.isEmpty else { return [] }
        var refused: [String] = []
        for (index, loop) in loops.enumerated() where index < processors.count {
            let processor = processors[index]
            let failure = try? await loop.submit { () -> String? in
                do {
                    try ProcessorAffinity.bindCurrentThread(to: processor)
                    OriginClient.setHomeWorker(index)
                    return nil
                } catch {
                    OriginClient.setHomeWorker(nil)
                    return "event loop \(index): \(error)"
                }
            }.get()
            if let failure { refused.append(failure) }
        }
        return refused
    }
}
