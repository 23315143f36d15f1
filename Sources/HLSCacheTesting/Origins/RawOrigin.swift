import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A bare TCP origin on 127.0.0.1 written with POSIX sockets, for answers no well-behaved server gives:
/// bodies cut short, resets, stalls. Each connection runs `handler` on its own thread.
public final class RawOrigin: Sendable {
    /// The port the system chose.
    public let port: Int
    private let listener: Int32
    private let accepted = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)

    /// `http://127.0.0.1:<port>`.
    public var base: String { "http://127.0.0.1:\(port)" }

    /// `http://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> String { base + path }

    /// Connections accepted so far.
    public var connectionCount: Int { accepted.load(ordering: .relaxed) }

    /// Starts listening; `handler` gets the connection number (from 1) and the connection.
    public init(handler: @escaping @Sendable (Int, RawConnection) -> Void) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var reuse: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && listen(fd, 64) == 0
                    && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(fd)
            throw POSIXError(.init(rawValue: code) ?? .EIO)
        }
        self.listener = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in
            acceptLoop(handler)
        }
        thread.start()
    }

    private func acceptLoop(_ handler: @escaping @Sendable (Int, RawConnection) -> Void) {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR, !stopped.load(ordering: .relaxed) { continue }
                return
            }
            let number = accepted.add(1, ordering: .relaxed).newValue
            let connection = RawConnection(accepted: fd)
            Thread {
                handler(number, connection)
                connection.close()
            }.start()
        }
    }

    /// Stops accepting connections (connections in progress run to the end of their handler).
    ///
    /// Call it: the accept thread keeps the origin alive until then.
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}

extension RawOrigin {
    /// How a ``faulty(_:length:)`` origin ends its answers.
    public enum Ending: Sendable {
        /// `SO_LINGER` 0, then close: the peer sees a connection reset.
        case reset
        /// A plain close after half the body: a short body.
        case shortBody
    }

    /// An origin for the faults Hummingbird will not commit: every request gets a 200 announcing `length` bytes,
    /// of which only half are sent before the connection ends, with a reset (RST) or a clean close (a short body).
    /// ``connectionCount`` counts the requests.
    public static func faulty(_ ending: Ending, length: Int = 200_000) throws -> RawOrigin {
        try RawOrigin { _, connection in
            guard connection.readRequest() != nil else { return }
            connection.send("HTTP/1.1 200 OK\r\nContent-Type: video/mp2t\r\nContent-Length: \(length)\r\n\r\n")
            connection.send([UInt8](repeating: 0x47, count: length / 2))
            usleep(100_000)
            connection.close(reset: ending == .reset)
        }
    }
}
