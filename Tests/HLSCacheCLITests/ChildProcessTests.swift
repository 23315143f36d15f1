import Foundation
import Glibc
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// The test kit's way to run programs: exit statuses and signals as they were, input and output through pipes, and
/// no descriptor of the test process leaking into the program, however many the test process holds.
@Suite("Child processes", .sharedMachine)
struct ChildProcessTests {
    @Test("an exit status, a signal and standard input come through; standard error is kept apart or merged")
    func statusSignalAndStreams() async throws {
        let exited = try await ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(exited.status == 3)
        #expect(exited.output == "out\n" && exited.errors == "err\n")
        let killed = try await ChildProcess.run("/bin/sh", ["-c", "kill -TERM $$"])
        #expect(killed.status == SIGTERM)
        let echoed = try await ChildProcess.run("/bin/cat", [], input: "a line\nanother\n")
        #expect(echoed.status == 0 && echoed.output == "a line\nanother\n")
        let merged = try await offPool {
            let child = try ChildProcess("/bin/sh", ["-c", "echo one; echo two >&2"], mergeErrors: true)
            return child.waitForExit(timeout: 30)
        }
        #expect(merged.output.contains("one") && merged.output.contains("two") && merged.errors.isEmpty)
        await #expect(throws: SpawnedProcess.LaunchError.self) {
            _ = try await ChildProcess.run("/nonexistent/program", [])
        }
    }

    @Test("a program that exits without reading its standard input fails the write, not the test run (SIGPIPE)")
    func inputNobodyReads() async throws {
        // More than a pipe holds: the write waits for a reader that exits instead.
        let input = String(repeating: "x", count: 1 << 20)
        let exited = try await ChildProcess.run("/bin/sh", ["-c", "exit 4"], input: input)
        #expect(exited.status == 4)
    }

    @Test("a program its test drops without stopping it (a test that failed first) is ended, children and all")
    func droppedProgramIsEnded() async throws {
        // A shell that ends its child when told to (as nginx's master ends its workers), and one that ignores SIGTERM.
        // Each sets its trap before it prints an id: the objects are dropped, and SIGTERM sent, as soon as the ids are
        // read (with the trap set after the echo, a busy machine let SIGTERM end the shell first, and its child ran on).
        let pids = try await offPool { () -> [pid_t] in
            let parent = try ChildProcess(
                "/bin/sh", ["-c", "trap 'kill $child; exit 0' TERM; sleep 60 & child=$!; echo $child; wait"])
            let stubborn = try ChildProcess("/bin/sh", ["-c", "trap '' TERM; echo $$; sleep 60"])
            var grandchild: pid_t = 0
            for _ in 0..<500 where grandchild == 0 {
                grandchild = pid_t(parent.output.split(separator: "\n").first ?? "") ?? 0
                if grandchild == 0 { Thread.sleep(forTimeInterval: 0.01) }
            }
            return [parent.process.processIdentifier, grandchild, stubborn.process.processIdentifier]
        }
        #expect(pids[1] != 0, "the shell never said its child's id")
        // Ended by the dropped objects (SIGTERM, then SIGKILL after the grace), and reaped by threads of their own.
        var running = pids.filter { $0 != 0 }
        let deadline = Date().addingTimeInterval(ChildProcess.stopGrace + 10)
        while !running.isEmpty, Date() < deadline {
            running = running.filter { kill($0, 0) == 0 && !Self.isZombie($0) }
            if !running.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(running.isEmpty, "still running after their ChildProcess was dropped: \(running)")
    }

    /// Whether `pid` has ended and waits to be reaped (`kill(pid, 0)` still finds it): an orphan is reaped by
    /// whichever process adopted it, when that process gets to it.
    static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[close...].dropFirst(2).first == "Z"
    }

    @Test("a program started while the test process holds 1,500 descriptors inherits none of them")
    func manyOpenDescriptorsAreNotInherited() async throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let wanted = rlim_t(4_096)
        if limit.rlim_cur < wanted, limit.rlim_max >= wanted {
            limit.rlim_cur = wanted
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let count = min(1_500, Int(limit.rlim_cur) - 300)
        var held: [CInt] = []
        defer { for descriptor in held { close(descriptor) } }
        for _ in 0..<count {
            // Without O_CLOEXEC: only the spawn's own closing keeps them from the program.
            let descriptor = open("/dev/null", O_RDONLY)
            try #require(descriptor >= 0)
            held.append(descriptor)
        }
        let result = try await ChildProcess.run("/bin/sh", ["-c", "ls /proc/self/fd"])
        #expect(result.status == 0, "\(result.errors)")
        // Standard input, output and error, and the directory `ls` reads.
        let listed = result.output.split(separator: "\n")
        #expect(listed.count <= 4, "\(listed)")
    }
}
