import CCurl

#if canImport(Glibc)
import Glibc
#endif

/// How many processors this process may use: those of its CPU affinity, fewer when its cgroup (v2) has a CPU
/// quota. `sysconf(_SC_NPROCESSORS_ONLN)` counts the host's: a container given one CPU of a 64-core host would
/// start threads for 64.
enum UsableProcessors {
    /// The count now, at least 1.
    static var count: Int {
        let affinity = Int(hlscache_affinity_count())
        return count(
            affinity: affinity > 0 ? affinity : nil, online: Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            cpuMax: readLine(of: "/sys/fs/cgroup/cpu.max"))
    }

    /// The count from its inputs, at least 1.
    /// - Parameters:
    ///   - affinity: the processors in the affinity mask, if it could be read.
    ///   - online: the processors online.
    ///   - cpuMax: the cgroup's `cpu.max` (`max 100000`, or a quota and a period: `150000 100000` is 2 processors,
    ///     rounded up), if there is one.
    static func count(affinity: Int?, online: Int, cpuMax: String?) -> Int {
        var usable = affinity ?? online
        let fields = cpuMax?.split(whereSeparator: { $0 == " " || $0 == "\n" }) ?? []
        if fields.count >= 2, let quota = Int(fields[0]), let period = Int(fields[1]), quota > 0, period > 0 {
            usable = min(usable, quota / period + (quota % period == 0 ? 0 : 1))
        }
        return max(1, usable)
    }

    /// The first line of a small file, or `nil`.
    private static func readLine(of path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 128)
        guard fgets(&line, Int32(line.count), file) != nil else { return nil }
        return String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
