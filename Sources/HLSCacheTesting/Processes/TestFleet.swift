import Foundation

/// A fleet as operators run it: `hlscache serve` nodes on 127.0.0.1, each with its own cache directory, behind real
/// nginx (``NginxBalancer``) hashing request URIs onto them, each node told the balancer's address (`--fleet-url`).
public final class TestFleet: Sendable {
    /// The nodes, in the order they were started.
    public let nodes: [ServerProcess]
    /// The load balancer.
    public let balancer: NginxBalancer

    /// The balancer's URL for an origin URL, in the forward form (what players of the fleet ask for).
    public func proxied(_ origin: String) -> String {
        balancer.url("/o/" + origin.replacingOccurrences(of: "://", with: "/"))
    }

    private init(nodes: [ServerProcess], balancer: NginxBalancer) {
        self.nodes = nodes
        self.balancer = balancer
    }

    /// Starts `count` nodes and the balancer in front of them.
    /// - Parameters:
    ///   - count: how many nodes.
    ///   - arguments: more `serve` arguments for every node (`--fleet-url` is added unless `fleetReadAhead` is false).
    ///   - fleetReadAhead: whether the nodes send their read-ahead through the balancer.
    public static func start(
        nodes count: Int, arguments: [String] = [], fleetReadAhead: Bool = true
    ) async throws -> TestFleet {
        let port = try freeLoopbackPort()
        var nodes: [ServerProcess] = []
        for index in 0..<count {
            let fleet = fleetReadAhead ? ["--fleet-url", "http://127.0.0.1:\(port)"] : []
            nodes.append(
                try await ServerProcess.start(arguments: ["--node-name", "node\(index + 1)"] + fleet + arguments))
        }
        let balancer = try await NginxBalancer.start(nodePorts: nodes.map(\.port), port: port)
        return TestFleet(nodes: nodes, balancer: balancer)
    }

    /// The node whose port is `port`.
    public func node(port: Int) -> ServerProcess? { nodes.first { $0.port == port } }

    /// Which node nginx sent each request URI to (the last one, for a URI asked for again), by the access log.
    public var owners: [String: Int] {
        var owners: [String: Int] = [:]
        for line in balancer.accessLog.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3, let port = fields.last?.split(separator: ":").last.flatMap({ Int($0) })
            else { continue }
            owners[String(fields[0])] = port
        }
        return owners
    }

    /// What the fleet logged about `path`, for a failing test's message: the balancer's access lines (a request it
    /// retried names every node it tried), its errors, and each node's log lines that name it.
    public func trace(of path: String) -> String {
        func lines(_ text: String, naming needle: String) -> [Substring] {
            text.split(separator: "\n").filter { $0.contains(needle) }
        }
        var trace = ["balancer:"] + lines(balancer.accessLog, naming: path).map { "  " + $0 }
        trace += ["balancer errors:"] + balancer.errorLog.split(separator: "\n").suffix(20).map { "  " + $0 }
        for node in nodes {
            trace += ["node on \(node.port):"] + lines(node.log, naming: path).map { "  " + $0 }
        }
        return trace.joined(separator: "\n")
    }

    /// Stops the balancer and every node still running.
    public func stop() async {
        try? await offPool { self.balancer.stop() }
        for node in nodes where node.process.isRunning { await node.stop() }
    }
}
