import Foundation
import Glibc
import Synchronization

/// One TCP connection on 127.0.0.1 driven byte by byte, for what an HTTP library will not do: on the client side,
/// pipelined requests, `Connection: close`, a client that stops reading or goes away; on the origin side (a
/// ``RawOrigin``'s connections), bodies cut short, resets and stalls. Its calls block: use it off the pool.
public final class RawConnection: Sendable {
    /// One HTTP/1.1 response as read off the wire.
    public struct Answer: Sendable {
        /// The status code.
        public var status: Int
        /// Header names in lower case.
        public var headers: [String: String]
        /// The body, by `Content-Length`.
        public var body: [UInt8]
    }

    /// Why a connection failed.
    public enum Failure: Error {
        /// `connect` failed with this errno.
        case connect(Int32)
        /// The peer closed after this many unread bytes.
        case closed(afterBytes: Int)
        /// The peer reset the connection (a close with unread data in its receive buffer).
        case reset
        /// The answer is not HTTP, or a read failed.
        case malformed(String)
    }

    private let descriptor: CInt
    private let buffer = Mutex<[UInt8]>([])
    private let closed = Atomic<Bool>(false)

    /// Connects to 127.0.0.1:`port`, with `timeout` seconds for every later read.
    public init(port: Int, timeout: TimeInterval = 30) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw Failure.connect(code)
        }
        self.descriptor = descriptor
        Self.setReceiveTimeout(descriptor, seconds: Int(timeout))
    }

    /// Wraps an accepted connection, with `timeout` seconds for every read.
    public init(accepted descriptor: CInt, timeout: Int = 10) {
        self.descriptor = descriptor
        Self.setReceiveTimeout(descriptor, seconds: timeout)
    }

    deinit { close() }

    /// A request without a body: `METHOD target HTTP/1.1`, `Host`, and `extra` header lines.
    public static func request(_ method: String, _ target: String, extra: [String] = []) -> String {
        ([method + " " + target + " HTTP/1.1", "Host: 127.0.0.1"] + extra).joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// Sends `text` as it is; `false` once the peer is gone.
    @discardableResult
    public func send(_ text: String) -> Bool {
        send(Array(text.utf8))
    }

    /// Sends bytes; `false` once the peer is gone.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { pointer in
                Glibc.send(descriptor, pointer.baseAddress, pointer.count, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    /// Reads a request head, up to the blank line; `nil` when the peer closed first.
    @discardableResult
    public func readRequest() -> String? {
        guard let end = try? readUntilHeadEnd() else { return nil }
        return String(decoding: take(end + 4), as: UTF8.self)
    }

    /// Reads a response head, up to the blank line, and leaves what follows unread; `nil` when the peer closed first
    /// or the read timed out.
    public func readResponseHead() -> String? {
        readRequest()
    }

    /// Reads one response; the body by `Content-Length`, or none for a HEAD request.
    public func readAnswer(isHead: Bool = false) throws -> Answer {
        let headEnd = try readUntilHeadEnd()
        let headText = String(decoding: take(headEnd + 4).dropLast(4), as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure.malformed(headText) }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let length = isHead ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        while buffer.withLock({ $0.count }) < length { try fill() }
        return Answer(status: status, headers: headers, body: take(length))
    }

    /// Reads up to `count` bytes (fewer at the end of the stream).
    public func read(upTo count: Int) throws -> [UInt8] {
        while buffer.withLock({ $0.count }) < count {
            do { try fill() } catch Failure.closed { break }
        }
        return take(min(count, buffer.withLock { $0.count }))
    }

    /// Whether the peer closes the connection (sends nothing more before the end of the stream) within the read
    /// timeout.
    public func serverCloses() -> Bool {
        do {
            while true { try fill() }
        } catch Failure.closed {
            return true
        } catch Failure.reset {
            // A server that closes a connection whose request it did not read whole resets it: a close too.
            return true
        } catch {
            return false
        }
    }

    /// Waits until the peer closes the connection (or resets it); `false` after `timeout`.
    public func waitForPeerClose(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var chunk = [UInt8](repeating: 0, count: 65536)
        while ContinuousClock.now < deadline {
            var polled = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&polled, 1, 100) >= 0 else { return false }
            guard polled.revents != 0 else { continue }
            let count = recv(descriptor, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
                return true
            }
        }
        return false
    }

    /// Half-closes the connection: nothing more is sent (`shutdown(SHUT_WR)`), answers can still be read.
    public func finishSending() {
        Glibc.shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Aborts the connection with a TCP reset (`SO_LINGER` 0, then close), like a player that crashes.
    public func reset() {
        close(reset: true)
    }

    /// Closes the socket (once); with `reset`, as an abortive close (RST).
    public func close(reset: Bool = false) {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        if reset {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        Glibc.close(descriptor)
    }

    private func readUntilHeadEnd() throws -> Int {
        while true {
            if let end = buffer.withLock({ Self.find([13, 10, 13, 10], in: $0) }) { return end }
            try fill()
        }
    }

    private func take(_ count: Int) -> [UInt8] {
        buffer.withLock { buffer in
            let taken = Array(buffer.prefix(count))
            buffer.removeFirst(taken.count)
            return taken
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count == 0 { throw Failure.closed(afterBytes: buffer.withLock { $0.count }) }
        if count < 0 {
            if errno == EINTR { return }
            if errno == ECONNRESET { throw Failure.reset }
            throw Failure.malformed("recv failed: errno \(errno)")
        }
        chunk.withUnsafeBufferPointer { bytes in
            buffer.withLock { $0.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<count])) }
        }
    }

    private static func setReceiveTimeout(_ descriptor: CInt, seconds: Int) {
        var limit = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
        }
        return nil
    }
}
