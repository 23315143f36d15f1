import CEpoll
import Foundation
import Glibc

/// `hlscache-bench fanout-clients PORT TARGET COUNT TIMEOUT SAMPLE_FILE`: the clients of the LL-HLS fan-out
/// (`bench/tools/llhls_fanout.py --client native`), in one thread over `epoll`, so that what they cost on the
/// machine's cores is small beside what the server under test spends.
///
/// A line protocol with the driver, which holds the origin and decides when to release it:
/// 1. connects `COUNT` sockets to `127.0.0.1:PORT`, prints a `fail socket: …` or `fail connect: …` line for
///    each one that could not connect, then `connected N`;
/// 2. waits for a `send` line on standard input, writes `GET TARGET` on every socket and prints
///    `sent MONOTONIC` (seconds of `CLOCK_MONOTONIC`, the clock of Python's `time.monotonic()`);
/// 3. reads every answer (head, then the body by its `Content-Length`), stamping each complete one with
///    `CLOCK_MONOTONIC`, until every client is answered or failed, or `TIMEOUT` seconds have passed since the send;
///    it prints `all CPU_SECONDS` (this process's CPU time) at once when the last client is done, for the driver
///    to read the server's CPU time then, and nothing else meanwhile;
/// 4. prints `done AT STATUS X-CACHE` for each complete answer, `fail REASON` for each other connected client,
///    then `end`, and writes the first complete answer's bytes (head and body) to `SAMPLE_FILE`.
///
/// The sockets stay open until the end: a client that closed as soon as it was answered would give the server
/// more work within the measured window than the Python clients do. The driver raises `RLIMIT_NOFILE` for the
/// thousand sockets; this process inherits it.
enum FanoutClients {
    /// One client's connection and what it has read.
    private struct Client {
        var descriptor: CInt
        var bytes: [UInt8] = []
        /// The answer's whole length (head and body), once the head is read.
        var answerLength: Int?
        var status = 0
        var xCache = "none"
        var completedAt: Double?
        var failure: String?
        var isFinished: Bool { completedAt != nil || failure != nil }
    }

    /// Runs the clients with the command's arguments (after `fanout-clients`).
    static func run(_ values: [String]) throws {
        guard values.count == 5, let port = UInt16(values[0]), let count = Int(values[2]),
            let timeout = Double(values[3])
        else {
            FileHandle.standardError.write(
                Data("usage: hlscache-bench fanout-clients PORT TARGET COUNT TIMEOUT SAMPLE_FILE\n".utf8))
            exit(64)
        }
        var clients: [Client] = []
        var connectFailures = ""
        for _ in 0..<count {
            switch connect(port: port) {
            case .success(let descriptor): clients.append(Client(descriptor: descriptor))
            case .failure(let failure): connectFailures += "fail \(failure.description)\n"
            }
        }
        say(connectFailures + "connected \(clients.count)")
        guard readLine() == "send" else { exit(65) }
        let poll = epoll_create1(CInt(EPOLL_CLOEXEC))
        precondition(poll >= 0, "epoll_create1: \(errno)")
        let request = Array(
            "GET \(values[1]) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUser-Agent: llhls_fanout\r\nAccept: */*\r\n\r\n"
                .utf8)
        for index in clients.indices {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
            event.data.u64 = UInt64(index)
            guard epoll_ctl(poll, EPOLL_CTL_ADD, clients[index].descriptor, &event) == 0 else {
                clients[index].failure = "epoll_ctl: errno \(errno)"
                continue
            }
            let written = request.withUnsafeBytes { write(clients[index].descriptor, $0.baseAddress, $0.count) }
            if written != request.count {
                clients[index].failure =
                    written < 0 ? "send: errno \(errno)" : "send: \(written) of \(request.count) bytes written"
                _ = epoll_ctl(poll, EPOLL_CTL_DEL, clients[index].descriptor, nil)
            }
        }
        let sentAt = monotonicSeconds()
        say(String(format: "sent %.6f", sentAt))
        receiveAll(&clients, poll: poll, until: sentAt + timeout)
        var report = ""
        for client in clients {
            if let at = client.completedAt {
                report += String(format: "done %.6f %d %@\n", at, client.status, client.xCache)
            } else {
                report += "fail \(client.failure ?? "no complete answer within \(timeout) s of the send")\n"
            }
        }
        if let sample = clients.first(where: { $0.completedAt != nil }), let length = sample.answerLength {
            _ = FileManager.default.createFile(atPath: values[4], contents: Data(sample.bytes[..<length]))
        }
        say(report + "end")
        for client in clients { close(client.descriptor) }
        close(poll)
    }

    /// Reads the answers until every client is answered or failed, or `deadline` (`CLOCK_MONOTONIC` seconds)
    /// passes; prints `all` once the last client is done. A failed client leaves the `epoll` set (level-triggered,
    /// its end of file would be reported on every wait).
    private static func receiveAll(_ clients: inout [Client], poll: CInt, until deadline: Double) {
        var pending = clients.count(where: { !$0.isFinished })
        if pending == 0 { say(String(format: "all %.6f", processCPUSeconds())) }
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        var scratch = [UInt8](repeating: 0, count: 65536)
        while pending > 0 {
            let left = deadline - monotonicSeconds()
            guard left > 0 else { return }
            let ready = events.withUnsafeMutableBufferPointer {
                epoll_wait(poll, $0.baseAddress, CInt($0.count), CInt(min(left * 1000, 1000)) + 1)
            }
            if ready < 0 {
                guard errno == EINTR else {
                    let reason = "epoll_wait: errno \(errno)"
                    for index in clients.indices where !clients[index].isFinished { clients[index].failure = reason }
                    return
                }
                continue
            }
            for event in events[0..<Int(ready)] {
                let index = Int(event.data.u64)
                guard !clients[index].isFinished else { continue }
                receive(into: &clients[index], scratch: &scratch)
                guard clients[index].isFinished else { continue }
                if clients[index].failure != nil {
                    _ = epoll_ctl(poll, EPOLL_CTL_DEL, clients[index].descriptor, nil)
                }
                pending -= 1
                if pending == 0 { say(String(format: "all %.6f", processCPUSeconds())) }
            }
        }
    }

    /// Reads what the client's socket has, and stamps the answer once it is complete.
    private static func receive(into client: inout Client, scratch: inout [UInt8]) {
        let count = scratch.withUnsafeMutableBytes { read(client.descriptor, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno != EAGAIN && errno != EINTR { client.failure = "read: errno \(errno)" }
            return
        }
        guard count > 0 else {
            client.failure = "connection lost after \(client.bytes.count) bytes"
            return
        }
        client.bytes += scratch[..<count]
        if client.answerLength == nil {
            guard let end = headEnd(client.bytes) else { return }
            let head = parseHead(client.bytes[..<end])
            client.status = head.status
            if let xCache = head.xCache { client.xCache = xCache }
            guard let length = head.contentLength else {
                client.failure = "no Content-Length"
                return
            }
            client.answerLength = end + 4 + length
        }
        if let length = client.answerLength, client.bytes.count >= length {
            let at = monotonicSeconds()
            if client.status == 200 { client.completedAt = at } else { client.failure = "status \(client.status)" }
        }
    }

    /// The status, `Content-Length` and `X-Cache` of a head (without its last `\r\n\r\n`), read as bytes: the
    /// clients parse a thousand heads in the measured window, where string handling would cost more than the
    /// server's answer.
    private static func parseHead(_ head: ArraySlice<UInt8>) -> (status: Int, contentLength: Int?, xCache: String?) {
        var status = 0
        var contentLength: Int?
        var xCache: String?
        var lineStart = head.startIndex
        var isFirst = true
        while lineStart < head.endIndex {
            var lineEnd = lineStart
            while lineEnd < head.endIndex, head[lineEnd] != 13 { lineEnd += 1 }
            let line = head[lineStart..<lineEnd]
            if isFirst {
                // "HTTP/1.1 200 OK": the three digits after the first space.
                if let space = line.firstIndex(of: 32), space + 3 < line.endIndex {
                    status = decimal(line[(space + 1)...(space + 3)]) ?? 0
                }
                isFirst = false
            } else if let colon = line.firstIndex(of: 58) {
                var valueStart = colon + 1
                while valueStart < line.endIndex, line[valueStart] == 32 || line[valueStart] == 9 { valueStart += 1 }
                let value = line[valueStart...]
                if nameIs(line[..<colon], "content-length") {
                    contentLength = decimal(value)
                } else if nameIs(line[..<colon], "x-cache") {
                    xCache = String(decoding: value, as: UTF8.self)
                }
            }
            lineStart = lineEnd + 2
        }
        return (status, contentLength, xCache)
    }

    /// The value of a field of decimal digits, with optional trailing spaces or tabs; `nil` for anything else, or
    /// past 12 digits.
    private static func decimal(_ bytes: ArraySlice<UInt8>) -> Int? {
        var digits = bytes
        while let last = digits.last, last == 32 || last == 9 { digits.removeLast() }
        guard !digits.isEmpty, digits.count <= 12, digits.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1) - 48 }
    }

    /// Whether a field name is `lowercase` (ASCII), whatever its case.
    private static func nameIs(_ name: ArraySlice<UInt8>, _ lowercase: StaticString) -> Bool {
        guard name.count == lowercase.utf8CodeUnitCount else { return false }
        return zip(name, UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount))
            .allSatisfy { ($0 | 0x20) == $1 || $0 == $1 }
    }

    /// The offset of the `\r\n\r\n` that ends the head, if it has arrived.
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// A blocking connection to `127.0.0.1:port`, made non-blocking once established.
    private static func connect(port: UInt16) -> Result<CInt, ConnectFailure> {
        let descriptor = socket(AF_INET, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return .failure(ConnectFailure("socket: errno \(errno)")) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let reason = "connect: errno \(errno)"
            close(descriptor)
            return .failure(ConnectFailure(reason))
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        return .success(descriptor)
    }

    /// Why a client could not connect.
    private struct ConnectFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Now, in seconds of `CLOCK_MONOTONIC`.
    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// This process's CPU time so far, in seconds.
    private static func processCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Prints `text` as one or more lines and flushes, for the driver reading them as they come.
    private static func say(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
