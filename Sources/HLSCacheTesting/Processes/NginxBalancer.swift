import Foundation
import Glibc

/// Real nginx as the fleet's load balancer on 127.0.0.1, configured with `docker/fleet/hlscache-fleet.conf` (the
/// file `docker/compose-fleet.yaml` uses) and its own `fleet/nodes.conf` and `fleet/listen.conf`.
public final class NginxBalancer: Sendable {
    /// The running nginx.
    public let child: ChildProcess
    /// The port it listens on.
    public let port: Int
    /// Its configuration prefix (the main `nginx.conf`, the `fleet/` files, the logs).
    public let directory: String

    /// `http://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// The access log so far: one `<request URI> <status> <node address>` line per request.
    public var accessLog: String {
        (try? String(contentsOfFile: directory + "/access.log", encoding: .utf8)) ?? ""
    }

    /// The error log so far: a node that failed a request, and the node tried next.
    public var errorLog: String {
        (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? ""
    }

    /// Starts nginx in front of hlscache nodes listening on 127.0.0.1 `nodePorts`, and waits (blocking) until it
    /// answers.
    /// - Parameters:
    ///   - nodePorts: the nodes' ports.
    ///   - port: the port to listen on (the nodes' `--fleet-url` names it before nginx starts); any free one when
    ///     `nil`.
    /// - Throws: when nginx is not installed or does not start within 10 s.
    public init(nodePorts: [Int], port: Int? = nil) throws {
        let directory = ServerProcess.temporaryDirectory()
        self.directory = directory
        let port = try port ?? freeLoopbackPort()
        self.port = port
        let fleetConf = TestPaths.packageRoot.appendingPathComponent("docker/fleet/hlscache-fleet.conf").path
        try FileManager.default.createDirectory(atPath: directory + "/fleet", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        chmod(directory + "/tmp", 0o777)  // workers run as nobody
        let main = """
            daemon off;
            worker_processes 1;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log warn;
            events { worker_connections 1024; }
            http {
                client_body_temp_path \(directory)/tmp;
                proxy_temp_path \(directory)/tmp;
                fastcgi_temp_path \(directory)/tmp;
                uwsgi_temp_path \(directory)/tmp;
                scgi_temp_path \(directory)/tmp;
                log_format fleet '$request_uri $status $upstream_addr';
                access_log \(directory)/access.log fleet;
                include \(fleetConf);
            }

            """
        try main.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        let nodes = nodePorts.map { "server 127.0.0.1:\($0) max_fails=1 fail_timeout=10s;\n" }.joined()
        try nodes.write(toFile: directory + "/fleet/nodes.conf", atomically: true, encoding: .utf8)
        try "listen 127.0.0.1:\(port);\n".write(
            toFile: directory + "/fleet/listen.conf", atomically: true, encoding: .utf8)
        child = try ChildProcess(
            "/usr/sbin/nginx", ["-p", directory, "-c", directory + "/nginx.conf", "-e", directory + "/error.log"],
            mergeErrors: true)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, child.isRunning {
            if Self.answers(port: port) { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        child.send(SIGKILL)
        let log = (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? ""
        throw ServerProcessError.didNotStart("nginx: \(child.output)\n\(log)")
    }

    /// Starts nginx off the concurrency pool (``init(nodePorts:port:)``).
    public static func start(nodePorts: [Int], port: Int? = nil) async throws -> NginxBalancer {
        try await offPool { try NginxBalancer(nodePorts: nodePorts, port: port) }
    }

    /// Stops nginx (fast shutdown) and waits for it.
    public func stop() {
        child.send(SIGTERM)
        child.waitForExit(timeout: 10)
    }

    /// Whether `GET /lb-healthz` on `port` answers 200 (a blocking check over a plain socket).
    private static func answers(port: Int) -> Bool {
        guard let connection = try? RawConnection(port: port, timeout: 2),
            connection.send(RawConnection.request("GET", "/lb-healthz"))
        else { return false }
        return (try? connection.readAnswer())?.status == 200
    }
}
