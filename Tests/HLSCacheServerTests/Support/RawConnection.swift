import Foundation
import Glibc

/// A blocking TCP connection to 127.0.0.1, for tests that need control below an HTTP client: pipelined requests,
/// `Connection: close`, a client that stops reading or goes away. Use it on one thread (inside `offPool`).
final class RawConnection {
    /// One HTTP/1.1 response as read off the wire.
    struct Answer {
        var status: Int
        /// Header names in lower case.
        var headers: [String: String]
        var body: [UInt8]
    }

    enum Failure: Error {
        case connect(Int32)
        case closed(afterBytes: Int)
        case malformed(String)
    }

    private let descriptor: CInt
    private var buffer: [UInt8] = []
    private var isClosed = false

    /// Connects, with `timeout` seconds for every later read.
    init(port: Int, timeout: TimeInterval = 30) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
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
        var limit = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    /// A request without a body: `METHOD target HTTP/1.1`, `Host`, and `extra` header lines.
    static func request(_ method: String, _ target: String, extra: [String] = []) -> String {
        ([method + " " + target + " HTTP/1.1", "Host: 127.0.0.1"] + extra).joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// Sends `text` as it is (requests separated by the caller's CRLFs).
    func send(_ text: String) {
        var bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeMutableBytes {
                Glibc.send(descriptor, $0.baseAddress! + sent, $0.count - sent, 0)
            }
            guard count > 0 else { return }
            sent += count
        }
    }

    /// Reads one response; the body by `Content-Length`, or none for a HEAD request.
    func readAnswer(isHead: Bool = false) throws -> Answer {
        var headEnd: Int?
        while headEnd == nil {
            headEnd = Self.find([13, 10, 13, 10], in: buffer)
            if headEnd == nil { try fill() }
        }
        let headText = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        buffer.removeFirst(headEnd! + 4)
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
        while buffer.count < length { try fill() }
        let body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return Answer(status: status, headers: headers, body: body)
    }

    /// Reads up to `count` bytes (fewer at the end of the stream).
    func read(upTo count: Int) throws -> [UInt8] {
        while buffer.count < count {
            do { try fill() } catch Failure.closed { break }
        }
        let taken = Array(buffer.prefix(count))
        buffer.removeFirst(taken.count)
        return taken
    }

    /// Whether the server closes the connection (reads nothing more before end of stream) within the timeout.
    func serverCloses() -> Bool {
        do {
            while true { try fill() }
        } catch Failure.closed {
            return true
        } catch {
            return false
        }
    }

    /// Closes the socket; with `reset`, as an abortive close (RST), like a player that crashes.
    func close(reset: Bool = false) {
        guard !isClosed else { return }
        isClosed = true
        if reset {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        Glibc.close(descriptor)
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count == 0 { throw Failure.closed(afterBytes: buffer.count) }
        if count < 0 { throw Failure.malformed("recv failed: errno \(errno)") }
        chunk.withUnsafeBufferPointer { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<count])) }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}
