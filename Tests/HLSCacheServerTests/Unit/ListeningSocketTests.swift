import HLSCacheTestTraits
import Testing

@testable import HLSCacheServer

/// The listening sockets' own checks: another socket joined to the port is seen, and `/proc` tables are read whole.
@Suite("Listening sockets", .sharedMachine)
struct ListeningSocketTests {
    @Test("a socket joined to our port with SO_REUSEPORT is a stranger; our own sockets are not")
    func strangersAreTheOtherSocketsOnThePort() throws {
        let first = try ListeningSocket(host: "127.0.0.1", port: 0, backlog: 16)
        defer { first.close() }
        let second = try ListeningSocket(host: "127.0.0.1", port: first.port, backlog: 16)
        defer { second.close() }
        #expect(second.port == first.port)
        #expect(ListeningSocket.strangers(to: [first, second]).isEmpty)
        #expect(ListeningSocket.strangers(to: [first]) == [second.inode])
    }

    @Test("a /proc table is read past its first page")
    func procTablesAreReadWhole() throws {
        let sockets = try (0..<200).map { _ in try ListeningSocket(host: "127.0.0.1", port: 0, backlog: 1) }
        defer { for socket in sockets { socket.close() } }
        let lines = ListeningSocket.wholeFile("/proc/net/tcp").split(separator: "\n")
        let found = Set(sockets.map(\.inode)).filter { inode in lines.contains { $0.contains(" \(inode) ") } }
        #expect(found.count == sockets.count)
    }
}
