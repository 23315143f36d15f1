import Foundation
import Glibc
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// The access log is on by default: it must never make a response wait on standard output.
@Suite("Access log", .sharedMachine)
struct AccessLogTests {
    @Test("each request is one line: time, level, request, then bytes cache id method ms path status, on both paths")
    func oneLinePerRequestOnBothPaths() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let target = "/o/http/127.0.0.1:\(origin.port)/fmp4/seg1.m4s?token=secret"
        let miss = try await TestHTTP.get(server.url(target))
        try await HitPathTests.waitForEntries(1, on: server)
        let hit = try await TestHTTP.get(server.url(target))
        #expect(miss.header("x-cache") == "MISS" && hit.header("x-cache") == "HIT")
        let loopHits =
            try await server.metric(#"hlscache_event_loop_hits_total{body="sendfile"}"#)
            + server.metric(#"hlscache_event_loop_hits_total{body="memory"}"#)
        #expect(loopHits == 1, "the hit was not answered on the event loop")
        let lines = try await server.settledLog().split(separator: "\n").filter { $0.contains("/fmp4/seg1.m4s") }
        #expect(lines.count == 2, "\(lines)")
        let length = try #require(origin.file(for: "/fmp4/seg1.m4s")).count
        for (line, answer) in zip(lines, [miss, hit]) {
            let id = try #require(answer.header("x-request-id"))
            let cache = try #require(answer.header("x-cache"))
            let fields = line.split(separator: " ").dropFirst().map(String.init)  // after the timestamp
            #expect(
                Array(fields.prefix(7)) == [
                    "info", "request", "bytes=\(length)", "cache=\(cache)", "id=\(id)", "method=GET", fields[6],
                ])
            #expect(fields[6].hasPrefix("ms="))
            #expect(
                Array(fields.dropFirst(7)) == [
                    #"path="/o/http/127.0.0.1:\#(origin.port)/fmp4/seg1.m4s?token=***""#, "proto=http/1.1",
                    "status=200",
                ])
        }
        await server.stop()
    }

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
