import Foundation
import Synchronization

/// A plain-HTTP forward proxy on 127.0.0.1 for the upstream-proxy tests: takes absolute-form requests
/// (`GET http://127.0.0.1:8000/a.ts HTTP/1.1`), records their URLs, forwards them to the loopback origin with
/// `Connection: close`, and relays the answer. One request per connection.
public final class ForwardProxy: Sendable {
    private let server: RawOrigin
    private let seen: Seen

    private final class Seen: Sendable {
        let urls = Mutex<[String]>([])
    }

    /// `http://127.0.0.1:<port>`.
    public var url: String { server.base }

    /// The absolute URLs requested through it, in order.
    public var requests: [String] { seen.urls.withLock { $0 } }

    /// Starts listening.
    public init() throws {
        let seen = Seen()
        self.seen = seen
        server = try RawOrigin { _, client in
            guard let head = client.readRequest() else { return }
            var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
            let parts = lines.removeFirst().split(separator: " ")
            guard parts.count == 3, let target = URLComponents(string: String(parts[1])), let host = target.host,
                host == "127.0.0.1", let port = target.port
            else {
                _ = client.send("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            }
            seen.urls.withLock { $0.append(String(parts[1])) }
            let path = target.percentEncodedPath + (target.percentEncodedQuery.map { "?" + $0 } ?? "")
            let kept = lines.filter { line in
                let name = line.prefix { $0 != ":" }.lowercased()
                return name != "connection" && !name.hasPrefix("proxy-")
            }
            guard let upstream = try? RawConnection(port: port) else { return }
            defer { upstream.close() }
            let request = (["\(parts[0]) \(path.isEmpty ? "/" : path) HTTP/1.1"] + kept + ["Connection: close", ""])
            _ = upstream.send(request.joined(separator: "\r\n") + "\r\n")
            while let chunk = try? upstream.read(upTo: 65536), !chunk.isEmpty {
                guard client.send(chunk) else { return }
            }
        }
    }

    /// Stops listening.
    public func stop() { server.stop() }
}
