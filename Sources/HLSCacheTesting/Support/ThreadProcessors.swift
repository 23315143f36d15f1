import Foundation

/// The threads of process `pid` with the processors each may run on (`comm` and `Cpus_allowed_list` of
/// `/proc/<pid>/task/*`).
public func threadProcessors(ofProcess pid: Int32) -> [(name: String, processors: [Int])] {
    let tasks = "/proc/\(pid)/task"
    let ids = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
    return ids.compactMap { id in
        guard
            let name = (try? String(contentsOfFile: "\(tasks)/\(id)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .newlines),
            let status = try? String(contentsOfFile: "\(tasks)/\(id)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") })
        else { return nil }
        return (name, processors(inCPUList: line.dropFirst("Cpus_allowed_list:".count)))
    }
}

/// The processors of a kernel CPU list such as `0-2,5`.
public func processors(inCPUList list: Substring) -> [Int] {
    list.split(separator: ",").flatMap { part -> [Int] in
        let bounds = part.split(separator: "-").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard let first = bounds.first, let last = bounds.last, first <= last else { return [] }
        return Array(first...last)
    }
}
