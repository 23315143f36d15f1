import HLSCacheTestTraits
import OriginCache
import Testing

/// How nodes name themselves in `Via`, and what a parent's URL is made of.
@Suite("Fleet hops and the parent tier", .sharedMachine)
struct FleetHopTests {
    @Test("Via elements of hlscache nodes are read in order; other proxies' are left out")
    func viaNames() {
        let via = "1.1 edge1 (hlscache), 1.0 fred, 1.1 p.example.com (Apache/1.1),1.1 shield-2 (hlscache)"
        #expect(FleetHop.nodeNames(inVia: via) == ["edge1", "shield-2"])
        #expect(FleetHop.nodeNames(inVia: "") == [])
        #expect(FleetHop.nodeNames(inVia: FleetHop.viaElement(nodeName: "a.b_c")) == ["a.b_c"])
    }

    @Test(
        "node names stay one token: 1 to 64 letters, digits, '.', '-' or '_'",
        arguments: [
            ("node1", true), ("hlscache-0a1b2c3d", true), ("", false), ("two words", false), ("a,b", false),
            ("(x)", false), (String(repeating: "n", count: 65), false),
        ])
    func nodeNames(name: String, valid: Bool) {
        #expect(FleetHop.isValidName(name) == valid)
    }

    @Test("random names are valid and differ")
    func randomNames() {
        let names = (0..<20).map { _ in FleetHop.randomNodeName() }
        #expect(names.allSatisfy(FleetHop.isValidName))
        #expect(Set(names).count == 20)
    }

    @Test("an origin URL is fetched at the parent's forward-mode URL")
    func parentURLs() throws {
        let parent = try ParentTier(url: "http://10.0.0.5:8080/", nodeName: "edge1")
        #expect(parent.base == "http://10.0.0.5:8080" && parent.host == "10.0.0.5")
        #expect(
            parent.url(for: "https://cdn.example/live/a.m3u8?t=1")
                == "http://10.0.0.5:8080/o/https/cdn.example/live/a.m3u8?t=1")
        #expect(parent.url(for: "ftp://cdn.example/a") == nil)
    }

    @Test(
        "a parent URL with userinfo, a query or another scheme is refused, naming the option",
        arguments: [
            "http://user:pw@10.0.0.5/", "http://10.0.0.5/?x=1", "ftp://10.0.0.5/", "10.0.0.5:8080", "http://",
        ])
    func refusedParentURLs(url: String) {
        #expect(throws: FleetConfigurationError.self) { try ParentTier(url: url, nodeName: "edge1") }
        do {
            _ = try ParentTier(url: url, nodeName: "edge1")
        } catch {
            #expect(error.description.contains("--parent"))
        }
    }
}
