import Glibc
import HLSCacheTesting
import Testing

/// The test kit's way to run programs: exit statuses and signals as they were, input and output through pipes, and
/// no descriptor of the test process leaking into the program, however many the test process holds.
@Suite("Child processes")
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

    @Test("a program its test drops without stopping it (a test that failed first) is killed, not left running")
    func droppedProgramIsKilled() async throws {
        let pid = try await offPool { () -> pid_t in
            let child = try ChildProcess("/bin/sleep", ["60"])
            return child.process.processIdentifier
        }
        // Killed by the dropped object, and reaped by a thread of its own: gone within moments, not in 60 s.
        var alive = true
        for _ in 0..<500 where alive {
            alive = kill(pid, 0) == 0
            if alive { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(!alive, "process \(pid) still runs after its ChildProcess was dropped")
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
