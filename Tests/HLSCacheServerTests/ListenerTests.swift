import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import NIOCore
import Testing

@testable import HLSCacheServer

/// The server's listeners: one socket per event loop on one port, and a graceful stop that lets the answers in
/// flight finish.
@Suite("Listeners", .sharedMachine)
struct ListenerTests {
    @Test("the server listens with one socket per event loop, all on its one port, and answers on each")
    func oneListenerPerEventLoop() async throws {
        try await withServerProcess { server, origin in
            let listening = listeningSocketInodes(onPort: server.port)
            // NIO's group has a loop per usable core (the served process inherits this one's affinity and cgroup).
            #expect(listening.count == System.coreCount, "sockets listening on port \(server.port): \(listening)")
            for inode in listening {
                #expect(try descriptorCount(of: server.process.processIdentifier, socket: inode) == 1)
            }
            try await expectEachNewConnectionAnswered(server, origin)
        }
    }

    @Test("a second server on a port in use stops at once, naming the address and what to do; the first keeps it all")
    func portInUseIsAClearError() async throws {
        try await withServer { server, origin in
            do {
                let second = try await InProcessServer.start(port: server.port)
                await second.stop()
                Issue.record("a second server started on port \(server.port)")
            } catch ServerProcessError.didNotStart(let output) {
                // Same user: its SO_REUSEPORT sockets could join the port; it finds the first server's and leaves.
                #expect(output.contains("cannot listen on 127.0.0.1:\(server.port): "), "\(output)")
                #expect(output.contains("choose another --port"), "\(output)")
            }
            #expect(listeningSocketInodes(onPort: server.port).count == System.coreCount)
            try await expectEachNewConnectionAnswered(server, origin)
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
            // The body arrived whole: the process stayed up until the answer in flight had ended.
            #expect(status == 0)
            #expect(seconds < 10)
        }
    }

    @Test("an answer outlasting --shutdown-grace is cut short, never ended as if whole, and the process exits")
    func answerPastTheGraceIsCut() async throws {
        try await withServerProcess(arguments: ["--shutdown-grace", "1"]) { server, origin in
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

/// Fetches an object 8 times through `server`, each on a new connection (a curl process each): every one is
/// answered whole, whichever listener the kernel gives it to.
private func expectEachNewConnectionAnswered(_ server: any RunningServer, _ origin: StreamOrigin) async throws {
    let url = server.proxied(origin.url("/large/3000.ts"))
    let expected = origin.file(for: "/large/3000.ts") ?? []
    let file = ServerProcess.temporaryDirectory() + "/body"
    for _ in 0..<8 {
        let answer = try await TestHTTP.download(url, to: file)
        #expect(answer.status == 200)
        let body = FileManager.default.contents(atPath: file).map { [UInt8]($0) } ?? []
        #expect(sameBytes(body, expected))
    }
}

/// The inodes of the TCP sockets listening on `port` (IPv4 and IPv6), from `/proc/net`.
private func listeningSocketInodes(onPort port: Int) -> [Int] {
    let hexPort = String(format: ":%04X", port)
    var inodes: [Int] = []
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        // Read to its end: Foundation's readers stop after the first page of a /proc file.
        for line in ListeningSocket.wholeFile(table).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            // local_address, rem_address, st (0A: LISTEN), ..., inode (the tenth field).
            if fields.count > 9, fields[1].hasSuffix(hexPort), fields[3] == "0A", let inode = Int(fields[9]) {
                inodes.append(inode)
            }
        }
    }
    return inodes
}

/// How many of process `pid`'s descriptors are the socket `inode`.
private func descriptorCount(of pid: pid_t, socket inode: Int) throws -> Int {
    let directory = "/proc/\(pid)/fd"
    return try FileManager.default.contentsOfDirectory(atPath: directory).count { name in
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(name)")) == "socket:[\(inode)]"
    }
}
