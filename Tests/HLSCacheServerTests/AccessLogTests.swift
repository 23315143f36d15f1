import Foundation
import Glibc
import HLSCacheTesting
import Testing

/// The access log is on by default: it must never make a response wait on standard output.
@Suite("Access log")
struct AccessLogTests {
    @Test("with standard output a pipe nobody reads, 3,000 requests are all answered")
    func aStuckStandardOutputDelaysNoAnswer() async throws {
        let folder = ServerProcess.temporaryDirectory()
        let fifo = folder + "/stdout"
        #expect(mkfifo(fifo, 0o600) == 0)
        // A reader that never reads: the server's writes fill the pipe (64 KiB) and then would block.
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        let port = try freeLoopbackPort()
        let server = try ChildProcess(
            "/bin/sh",
            [
                "-c", "exec \"$0\" serve --host 127.0.0.1 --port \(port) --cache-dir \"$1\" > \"$2\"",
                ServerProcess.binary.path, folder + "/cache", fifo,
            ])
        defer { server.send(SIGKILL) }
        let health = "http://127.0.0.1:\(port)/healthz"
        let deadline = ContinuousClock.now + .seconds(20)
        while (try? await TestHTTP.get(health))?.status != 200 {
            try #require(ContinuousClock.now < deadline, "the server did not start: \(server.errors)")
            try await Task.sleep(for: .milliseconds(50))
        }
        // About 100 bytes of access log each: five times what the pipe holds.
        let answered = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var count = 0
                    for _ in 0..<375 where try await TestHTTP.get(health).status == 200 { count += 1 }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(answered == 3_000)
    }
}
