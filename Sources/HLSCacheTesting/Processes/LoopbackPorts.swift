import Foundation
import Glibc
import Synchronization

/// A TCP port on 127.0.0.1 that nothing listens on now, for a program that must be told its port before it starts.
///
/// The port is picked outside the kernel's ephemeral range (`net.ipv4.ip_local_port_range`), where no socket bound
/// to port 0 and no outgoing connection can land: a port the kernel picked and this function closed again could be
/// handed to a server another test starts on port 0 before the program told of it binds it. No port is handed out
/// twice in one test process.
/// - Returns: the port.
/// - Throws: when no free port is found.
public func freeLoopbackPort() throws -> Int {
    let candidates = LoopbackPorts.candidates
    for _ in 0..<500 {
        let port = Int.random(in: candidates)
        guard LoopbackPorts.handedOut.withLock({ $0.insert(port).inserted }) else { continue }
        if LoopbackPorts.isFree(port) { return port }
    }
    throw POSIXError(.EADDRINUSE)
}

/// What ``freeLoopbackPort()`` picks from and has handed out.
enum LoopbackPorts {
    /// Ports already handed out in this process.
    static let handedOut = Mutex<Set<Int>>([])

    /// Ports outside the ephemeral range: from 20000 (or 10000, or 1024) up to its start when at least 1,000 fit
    /// there, else above its end.
    static let candidates: ClosedRange<Int> = {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let ends = text.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        let (low, high) = ends.count == 2 ? (ends[0], ends[1]) : (32768, 60999)
        for start in [20000, 10000, 1024] where low - start >= 1000 { return start...(low - 1) }
        precondition(65535 - high >= 1000, "no 1,000 ports outside the ephemeral range \(low)-\(high)")
        return (high + 1)...65535
    }()

    /// Whether a socket can be bound to 127.0.0.1 `port` now (closed again at once).
    static func isFree(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
