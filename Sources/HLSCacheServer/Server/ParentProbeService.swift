import Logging
import OriginCache
import OriginClient
import ServiceLifecycle

/// With `--parent`: asks the parent's `/healthz` who it is, every second until it answers, then every 30 s (a
/// parent's name is new at each of its starts), so that a request sent by the parent is refused as a loop (``RequestResolution``). A parent
/// that answers 508, or names this node as its own parent, makes a loop: that is logged as an error, each time.
struct ParentProbeService: Service {
    let components: ServerComponents
    let parent: ParentTier

    /// How often the parent is asked again once it answered, and before.
    static let interval: Duration = .seconds(30)
    static let untilKnown: Duration = .seconds(1)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            // Once more a second after the name is learnt: two nodes that are each other's parent and learnt each
            // other's names at the same moment find the loop then.
            var probesKnowing = 0
            while !Task.isCancelled {
                await probe()
                if parent.identity.name != nil { probesKnowing += 1 }
                try? await Task.sleep(for: probesKnowing < 2 ? Self.untilKnown : Self.interval)
            }
        }
    }

    private func probe() async {
        let url = parent.base + "/healthz"
        var request = OriginRequest(url: url, headers: [("Via", FleetHop.viaElement(nodeName: parent.nodeName))])
        request.totalTimeout = .seconds(5)
        do {
            let response = try await components.origin.client.fetch(request)
            for try await _ in response.body {}
            // 508: the parent refused this node's request as a loop. Its own parent this node: a loop too, told even
            // when both learned each other's names before either refused the other.
            if response.status == 508 || response.header(FleetHop.parentNodeHeader) == parent.nodeName {
                components.logger.error(
                    "parent loop: --parent leads back to this node", metadata: ["parent": "\(parent.base)"])
            } else if let name = response.header(FleetHop.nodeHeader), FleetHop.isValidName(name),
                parent.identity.learn(name)
            {
                components.logger.info("parent", metadata: ["parent": "\(parent.base)", "name": "\(name)"])
            }
        } catch  where parent.identity.name != nil {
            components.logger.warning(
                "parent unreachable", metadata: ["parent": "\(parent.base)", "error": "\(error)"])
        } catch {
            // Not up yet (parents and children start in any order): asked again in a second.
        }
    }
}
