import Foundation
import Glibc
import Synchronization

/// An origin on raw sockets, for the faults Hummingbird will not commit: every request gets a 200 announcing
/// `length` bytes, of which only half are sent before the connection ends, with a reset (RST) or a clean close
/// (FIN, a short body).
final class FaultOrigin: Sendable {
    enum Ending: Sendable {
        /// `SO_LINGER` 0, then close: the peer sees a connection reset.
        case reset
        /// A plain close after half the body: a short body.
        case shortBody
    }

    let port: Int
    private let listener: CInt
    private let served = Atomic<Int>(0)

    /// Requests answered so far.
    var requests: Int { served.load(ordering: .relaxed) }

    /// `http://127.0.0.1:<port><path>`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    init(ending: Ending, length: Int = 200_000) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var one: CInt = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<CInt>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length_ = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length_) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        let thread = Thread { [self] in
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                var request: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !request.suffix(4).elementsEqual([13, 10, 13, 10]) {
                    let count = read(connection, &buffer, buffer.count)
                    guard count > 0 else { break }
                    request += buffer[0..<count]
                }
                self.served.add(1, ordering: .relaxed)
                let head = "HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nContent-Length: \(length)\r\n\r\n"
                let body = [UInt8](repeating: 0x47, count: length / 2)
                _ = head.utf8CString.withUnsafeBufferPointer { write(connection, $0.baseAddress, $0.count - 1) }
                _ = body.withUnsafeBufferPointer { write(connection, $0.baseAddress, $0.count) }
                usleep(100_000)
                if case .reset = ending {
                    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                    setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                }
                close(connection)
            }
        }
        thread.start()
    }

    /// Stops listening.
    func stop() {
        shutdown(listener, CInt(SHUT_RDWR))
        close(listener)
    }
}
