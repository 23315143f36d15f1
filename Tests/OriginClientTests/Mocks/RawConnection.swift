import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One accepted connection of a ``RawOrigin``.
final class RawConnection: Sendable {
    private let fd: Int32
    private let closed = Atomic<Bool>(false)

    init(fd: Int32) {
        self.fd = fd
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads the request head (up to the blank line); `nil` when the client closed first.
    @discardableResult
    func readRequest() -> String? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !received.containsHeadEnd {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            received.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Sends text; `false` once the peer is gone.
    @discardableResult
    func send(_ text: String) -> Bool {
        send(Array(text.utf8))
    }

    /// Sends bytes; `false` once the peer is gone.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { pointer in
                Glibc.send(fd, pointer.baseAddress, pointer.count, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    /// Waits until the peer closes the connection (or resets it); `false` after `timeout`.
    func waitForPeerClose(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        while ContinuousClock.now < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) >= 0 else { return false }
            guard descriptor.revents != 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
                return true
            }
        }
        return false
    }

    /// Aborts the connection with a TCP reset (`SO_LINGER` 0, then close).
    func reset() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Closes the connection (once).
    func close() {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        _ = Glibc.close(fd)
    }
}

extension [UInt8] {
    fileprivate var containsHeadEnd: Bool {
        let end: [UInt8] = [13, 10, 13, 10]
        guard count >= 4 else { return false }
        return (0...(count - 4)).contains { self[$0..<($0 + 4)].elementsEqual(end) }
    }
}
