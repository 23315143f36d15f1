import Foundation
import HLSCacheTesting
import Testing

/// The server's listeners: one socket per event loop on one port, and a graceful stop that lets the answers in
/// flight finish.
@Suite("Listeners")
struct ListenerTests {
    @Test("the server listens with one socket per event loop, all on its one port, and answers on each")
    func oneListenerPerEventLoop() async throws {
        try await withServer { server, origin in
            let pid = server.process.processIdentifier
            let loops = try threadNames(of: pid).filter { $0.hasPrefix("NIO-SGLTN-") }.count
            #expect(loops >= 1)
            #expect(try listeningSockets(onPort: server.port) == loops)
            // Connections spread over the listeners by the kernel: each is answered, on whichever loop took it.
            let url = server.proxied(origin.url("/large/300000.ts"))
            for _ in 0..<8 {
                let answer = try await TestHTTP.send("GET", url)  // a curl process: a new connection each
                #expect(answer.status == 200)
                #expect(answer.headers["content-length"] == "300000")
            }
        }
    }

    @Test("SIGTERM during a download: the answer in flight arrives whole, then the process exits 0")
    func gracefulStopFinishesAnswersInFlight() async throws {
        try await withServer { server, origin in
            let path = "/large/2000000.ts"
            origin.set(path, .slowSecondHalf(.seconds(2)))
            let expected = try #require(origin.file(for: path))
            let download = Task { try await TestHTTP.get(server.proxied(origin.url(path))) }
            while origin.count(path) == 0 { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(300))  // the answer's head and first half are on their way
            let (status, seconds) = await server.stop()
            let answer = try await download.value
            #expect(answer.status == 200)
            #expect(sameBytes(answer.body, expected), "got \(answer.body.count) of \(expected.count) bytes")
            #expect(status == 0)
            #expect(seconds > 1, "the process exited after \(seconds) s, before the answer in flight had ended")
        }
    }

    @Test("an answer outlasting --shutdown-grace is cut short, never ended as if whole, and the process exits")
    func answerPastTheGraceIsCut() async throws {
        try await withServer(arguments: ["--shutdown-grace", "1"]) { server, origin in
            let path = "/large/2000001.ts"
            origin.set(path, .slowSecondHalf(.seconds(60)))
            let download = Task { try await TestHTTP.get(server.proxied(origin.url(path))) }
            while origin.count(path) == 0 { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(300))
            let (status, seconds) = await server.stop()
            #expect(status != -1, "the process had to be killed")
            #expect(seconds < 10)
            let whole = try? await download.value
            #expect(whole == nil, "a body cut at the grace was read as complete")
        }
    }
}

/// The names of the threads of process `pid`.
private func threadNames(of pid: pid_t) throws -> [String] {
    let tasks = "/proc/\(pid)/task"
    return try FileManager.default.contentsOfDirectory(atPath: tasks).compactMap { thread in
        try? String(contentsOfFile: "\(tasks)/\(thread)/comm", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// How many TCP sockets listen on `port` (IPv4 and IPv6), from `/proc/net`.
private func listeningSockets(onPort port: Int) throws -> Int {
    let hexPort = String(format: ":%04X", port)
    var count = 0
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            // local_address, rem_address, st: 0A is LISTEN.
            if fields.count > 3, fields[1].hasSuffix(hexPort), fields[3] == "0A" { count += 1 }
        }
    }
    return count
}
