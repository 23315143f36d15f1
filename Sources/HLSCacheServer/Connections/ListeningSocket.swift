import Glibc
import NIOCore

/// One of the server's listening sockets: bound with `SO_REUSEPORT` so that every event loop has its own on the same
/// port (``PortListeners``), made here rather than by NIO so that a failure says what to do and the socket can be
/// told apart from another process's on the same port.
struct ListeningSocket {
    /// The socket's descriptor; NIO's channel owns it once made from it.
    let descriptor: CInt
    /// The port it is bound to (the kernel's pick when asked for 0).
    let port: Int
    /// Its inode, as `/proc/net/tcp` lists it.
    let inode: UInt64

    /// Resolves `host`, binds `port` on it (`SO_REUSEADDR`: a restart does not wait for the last run's connections in
    /// `TIME_WAIT`; `SO_REUSEPORT`: the other loops' sockets join it) and listens.
    /// - Throws: ``ListenError`` naming the address, when it cannot be resolved, bound (in use) or listened on.
    init(host: String, port: Int, backlog: Int) throws(ListenError) {
        let address: SocketAddress
        do {
            address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        } catch {
            throw ListenError(host: host, port: port, problem: "the host does not resolve (\(error))")
        }
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = socket(address.protocol.rawValue, type, 0)
        guard descriptor >= 0 else { throw ListenError(host: host, port: port, errno: errno) }
        var on: CInt = 1
        let size = socklen_t(MemoryLayout<CInt>.size)
        var status = stat()
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let listening =
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, size) == 0
            && setsockopt(descriptor, SOL_SOCKET, SO_REUSEPORT, &on, size) == 0
            && address.withSockAddr { bind(descriptor, $0, socklen_t($1)) } == 0
            && listen(descriptor, CInt(clamping: backlog)) == 0
            && fstat(descriptor, &status) == 0
            && withUnsafeMutablePointer(
                to: &storage,
                {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
                }) == 0
        guard listening else {
            let code = errno
            Glibc.close(descriptor)
            throw ListenError(host: host, port: port, errno: code)
        }
        self.descriptor = descriptor
        // sin_port and sin6_port lie at the same offset, in network order.
        self.port = withUnsafeBytes(of: storage) { Int(UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self))) }
        self.inode = UInt64(status.st_ino)
    }

    /// Closes the socket (before NIO owns it).
    func close() {
        Glibc.close(descriptor)
    }

    /// The inodes of the sockets listening on the local address of `ours` (all bound to one address and port) that
    /// are none of `ours`: another process's, joined to the port with `SO_REUSEPORT` (same user), which would take a
    /// share of the connections. From `/proc/net/tcp` and `/proc/net/tcp6`.
    static func strangers(to ours: [ListeningSocket]) -> [UInt64] {
        let inodes = Set(ours.map(\.inode))
        let entries = ["/proc/net/tcp", "/proc/net/tcp6"].flatMap { table in
            wholeFile(table).split(separator: "\n").dropFirst().compactMap {
                line -> (address: Substring, inode: UInt64)? in
                // sl, local_address, rem_address, st (0A: LISTEN), queues, timer, retransmits, uid, timeout, inode.
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[3] == "0A", let inode = UInt64(fields[9]) else { return nil }
                return (fields[1], inode)
            }
        }
        let addresses = Set(entries.filter { inodes.contains($0.inode) }.map(\.address))
        return entries.filter { addresses.contains($0.address) && !inodes.contains($0.inode) }.map(\.inode)
    }
}

extension ListeningSocket {
    /// All of a `/proc` file, read to its end: its size is 0, and Foundation's readers stop after the first page
    /// (27 of 3,000 lines of `/proc/net/tcp` on a busy machine). Empty when it cannot be read.
    static func wholeFile(_ path: String) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return "" }
        defer { Glibc.close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes.append(contentsOf: chunk[0..<count])
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The server cannot listen on its address: says which, why, and what to do.
struct ListenError: Error, CustomStringConvertible {
    /// The address asked for.
    let host: String
    /// The port asked for.
    let port: Int
    /// What went wrong, and what to do.
    let problem: String

    init(host: String, port: Int, problem: String) {
        self.host = host
        self.port = port
        self.problem = problem
    }

    /// From a failed system call's `errno`.
    init(host: String, port: Int, errno code: CInt) {
        let reason = String(cString: strerror(code))
        let advice =
            switch code {
            case EADDRINUSE: "; another process listens there: stop it, or choose another --port"
            case EACCES: "; ports below 1024 need privileges: choose another --port"
            case EADDRNOTAVAIL: "; the address is not one of this machine's: check --host"
            default: ""
            }
        self.init(host: host, port: port, problem: "\(reason) (errno \(code))\(advice)")
    }

    /// Another process of the same user listens on the port with `SO_REUSEPORT` too.
    static func shared(host: String, port: Int) -> ListenError {
        ListenError(
            host: host, port: port,
            problem: "another process listens on it too (SO_REUSEPORT) and would take a share of the connections: "
                + "stop it, or choose another --port")
    }

    var description: String { "cannot listen on \(host):\(port): \(problem)" }
}
