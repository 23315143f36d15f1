import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Synchronization
import Testing

/// The HTTP edges a faithful proxy gets right, against a raw-socket origin: ranges past the end, bodies encoded
/// though nobody asked, conflicting lengths, and what the access log says of an answer cut short.
@Suite("HTTP edges", .sharedMachine)
struct HTTPEdgeTests {
    /// 100 bytes, each its own index.
    static let object = (0..<100).map { UInt8($0) }

    /// The request heads an origin received.
    final class Heads: Sendable {
        let list = Mutex<[String]>([])
    }

    /// An origin that ignores `Range` and answers every request with `head` and `body`; it keeps the request heads.
    static func origin(head: String, body: [UInt8]) throws -> (RawOrigin, Heads) {
        let requests = Heads()
        let origin = try RawOrigin { _, connection in
            while let request = connection.readRequest() {
                requests.list.withLock { $0.append(request) }
                connection.send(Array(head.utf8) + body)
            }
        }
        return (origin, requests)
    }

    @Test("a segment miss's head reaches the player while the origin still holds the body; then the body comes whole")
    func headGoesBeforeTheBody() async throws {
        let bodyReleased = DispatchSemaphore(value: 0)
        let origin = try RawOrigin { _, connection in
            guard connection.readRequest() != nil else { return }
            connection.send("HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nContent-Length: 100\r\n\r\n")
            // Held until the player has the head (or the test gave up on it).
            _ = bodyReleased.wait(timeout: .now() + 20)
            connection.send(Self.object)
        }
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let port = server.port
        let target = String(server.proxied(origin.url("/held.ts")).dropFirst(server.url("").count))
        let (head, body) = try await offPool {
            let connection = try RawConnection(port: port, timeout: 10)
            connection.send(RawConnection.request("GET", target))
            // A head held for the body would leave this read to time out.
            let head = connection.readResponseHead()
            bodyReleased.signal()
            return (head, try connection.read(upTo: 100))
        }
        #expect(head?.hasPrefix("HTTP/1.1 200") == true)
        #expect(head?.lowercased().contains("content-length: 100") == true)
        #expect(body == Self.object)
        #expect(origin.connectionCount == 1)
        await server.stop()
    }

    @Test("a range running past the end is served to the end (206), one starting past it is 416, on a miss and a hit")
    func rangesAreClippedToTheEnd() async throws {
        let (origin, requests) = try Self.origin(
            head: "HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nContent-Length: 100\r\n\r\n", body: Self.object)
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let url = server.proxied(origin.url("/object.ts"))

        let missed = try await TestHTTP.get(url, headers: [("Range", "bytes=50-150")])
        #expect(missed.status == 206)
        #expect(missed.header("content-range") == "bytes 50-99/100")
        #expect(missed.body == Array(Self.object[50...]))
        let beyond = try await TestHTTP.get(url, headers: [("Range", "bytes=150-200")])
        #expect(beyond.status == 416)

        _ = try await TestHTTP.get(url)
        // The fill is published just after its answer ends.
        try await HitPathTests.waitForEntries(1, on: server)
        let asked = requests.list.withLock { $0.count }
        let frontHits = try await server.metric("hlscache_front_hits_total")
        let fillStarts = try await server.metric("hlscache_event_loop_fill_starts_total")
        let hit = try await TestHTTP.get(url, headers: [("Range", "bytes=50-150")])
        #expect(hit.status == 206 && hit.header("x-cache") == "HIT")
        #expect(hit.header("content-range") == "bytes 50-99/100")
        #expect(hit.body == Array(Self.object[50...]))
        let hitBeyond = try await TestHTTP.get(url, headers: [("Range", "bytes=150-200")])
        #expect(hitBeyond.status == 416)
        #expect(hitBeyond.header("content-range") == "bytes */100")
        // Both answered by the event loop's hit path, which starts no fill for them (the 416 once started one).
        #expect(try await server.metric("hlscache_front_hits_total") - frontHits == 2)
        #expect(try await server.metric("hlscache_event_loop_fill_starts_total") == fillStarts)
        _ = try await server.settledLog()
        #expect(
            requests.list.withLock { $0.count } == asked, "a range past the end of a cached object went to the origin")
        await server.stop()
    }

    @Test("origins are asked for identity; a body gzipped anyway is stored and served decoded, without the header")
    func encodedBodiesAreDecoded() async throws {
        let encoded = try await ChildProcess.run(
            "/usr/bin/python3",
            ["-c", "import base64, gzip; print(base64.b64encode(gzip.compress(b'G' * 20000)).decode())"])
        let gzipped = try #require(Data(base64Encoded: encoded.output.trimmingCharacters(in: .whitespacesAndNewlines)))
        let (origin, requests) = try Self.origin(
            head: "HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nContent-Encoding: gzip\r\n"
                + "Content-Length: \(gzipped.count)\r\n\r\n",
            body: [UInt8](gzipped))
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let url = server.proxied(origin.url("/gzipped.ts"))
        // The first request fills; later ones join the fill until it is published (MISS), then hit.
        var results: [String] = []
        let deadline = Date().addingTimeInterval(10)
        while results.last != "HIT", Date() < deadline {
            let answer = try await TestHTTP.get(url)
            #expect(answer.status == 200)
            #expect(answer.body.count == 20000 && answer.body.allSatisfy { $0 == UInt8(ascii: "G") }, "not decoded")
            #expect(answer.header("content-encoding") == nil)
            results.append(answer.header("x-cache") ?? "")
        }
        #expect(results.first == "MISS" && results.last == "HIT", "\(results)")
        #expect(requests.list.withLock { $0.count } == 1, "the decoded body was not stored")
        let head = try #require(requests.list.withLock { $0.first })
        #expect(head.lowercased().contains("accept-encoding: identity"), "\(head)")
        await server.stop()
    }

    @Test("two different Content-Length values are a 502 with the reason, and nothing is cached")
    func conflictingLengthsAreRefused() async throws {
        let (origin, _) = try Self.origin(
            head: "HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nContent-Length: 100\r\nContent-Length: 50\r\n\r\n",
            body: Self.object)
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let url = server.proxied(origin.url("/conflict.ts"))
        let first = try await TestHTTP.get(url)
        #expect(first.status == 502)
        #expect(first.text.contains("Content-Length"), "\(first.text)")
        let connections = origin.connectionCount
        #expect(try await TestHTTP.get(url).status == 502)
        #expect(origin.connectionCount > connections, "a refused answer was cached")
        await server.stop()
    }

    @Test("an answer cut short is logged with the bytes that went out, not 0")
    func abortedAnswersLogTheBytesSent() async throws {
        // The origin sends half of what it announced and cuts the connection only once the player has bytes of it:
        // what went out is then more than 0 however loaded the machine.
        let playerHasBytes = Flag()
        let origin = try RawOrigin { _, connection in
            guard connection.readRequest() != nil else { return }
            connection.send("HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nContent-Length: 400000\r\n\r\n")
            connection.send([UInt8](repeating: 0x47, count: 200_000))
            let deadline = Date().addingTimeInterval(20)
            while !playerHasBytes.isSet, Date() < deadline { usleep(5_000) }
            connection.close()
        }
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1"])
        let port = server.port
        let target = "/o/http/127.0.0.1:\(origin.port)/cut.ts"
        let received = try await offPool { () -> Int in
            let connection = try RawConnection(port: port, timeout: 20)
            connection.send(RawConnection.request("GET", target))
            // The head, then body bytes: the cut waits for them.
            var bytes: [UInt8] = []
            while bytes.count < 1 << 20 {
                let more = try connection.read(upTo: 1)
                if more.isEmpty { break }
                bytes += more
                if let end = bytes.firstRange(of: [13, 10, 13, 10]), bytes.count > end.upperBound { break }
            }
            var received = bytes.count
            playerHasBytes.set()
            while let more = try? connection.read(upTo: 1 << 16), !more.isEmpty { received += more.count }
            return received
        }
        #expect(received < 400_000, "a body cut at the origin arrived whole")
        let logged = try await eventually { server.log.contains("response aborted") }
        #expect(logged)
        let line = try #require(server.log.split(separator: "\n").first { $0.contains("response aborted") })
        let bytes = line.split(separator: " ").first { $0.hasPrefix("bytes=") }.flatMap { Int($0.dropFirst(6)) }
        #expect((bytes ?? 0) > 0, "\(line)")
        #expect((bytes ?? .max) <= 200_000, "\(line)")
        await server.stop()
    }

    @Test("a segment trickling below the minimum rate is cut off after one window, not after the 300 s total")
    func tricklingSegmentIsCutOff() async throws {
        let origin = try RawOrigin { _, connection in
            guard connection.readRequest() != nil else { return }
            connection.send("HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nContent-Length: 1000000\r\n\r\n")
            // 500 bytes a second: a byte arrives well within the stall timeout, yet the body would take 33 minutes.
            while connection.send([UInt8](repeating: 0x47, count: 100)) { usleep(200_000) }
        }
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1"])
        let sent = Date()
        await #expect(throws: (any Error).self) { _ = try await TestHTTP.get(server.proxied(origin.url("/slow.ts"))) }
        let seconds = Date().timeIntervalSince(sent)
        #expect(seconds >= 9 && seconds < 40, "cut off after \(seconds) s")
        let logged = try await eventually { server.log.contains("rate timeout") }
        #expect(logged, "the log does not say why")
        #expect(try await server.settledLog().contains(origin.url("/slow.ts")))
        await server.stop()
    }
}
