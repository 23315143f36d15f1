import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// A manifest the origin redirects to another path: its relative references resolve from where it was found
/// (RFC 3986 §5.1.3, as players do), not from the URL that was asked for.
@Suite("Manifests behind redirects", .sharedMachine)
struct RedirectBaseTests {
    @Test(
        "a redirected playlist or MPD is rewritten from where the origin answered, and plays like the original",
        arguments: ["/ts-multivariant/hi/index.m3u8", "/dash-number/manifest.mpd"])
    func referencesResolveFromTheRedirectTarget(path: String) async throws {
        let expected = try await FleetTests.direct(path)
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let moved = server.proxied(origin.url("/moved" + path))
        let manifest = try await TestHTTP.get(moved)
        #expect(manifest.status == 200)
        let folder = String(path[..<path.lastIndex(of: "/")!])
        #expect(manifest.text.contains("/o/http/127.0.0.1:\(origin.port)\(folder)/"), "\(manifest.text)")
        #expect(!manifest.text.contains("/moved/"), "\(manifest.text)")
        let played = try await FFmpeg.framemd5(moved)
        #expect(played.status == 0, "\(played.errors)")
        #expect(played.output == expected)
        // Every segment came from its own path, none through the redirect.
        #expect(origin.counts.keys.filter { $0.hasPrefix("/moved/") } == ["/moved" + path], "\(origin.counts)")
        await server.stop()
        // From the disk after a restart: the same base.
        let again = try await InProcessServer.start(
            cacheDirectory: server.cacheDirectory, arguments: ["--allow-host", "127.0.0.1", "--read-ahead", "0"])
        let reread = try await TestHTTP.get(again.proxied(origin.url("/moved" + path)))
        #expect(reread.header("x-cache") == "HIT")
        #expect(reread.text.contains("/o/http/127.0.0.1:\(origin.port)\(folder)/") && !reread.text.contains("/moved/"))
        await again.stop()
    }

    @Test("through a parent, the edge resolves a redirected playlist from where the parent found it")
    func theParentPassesTheBaseOn() async throws {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let parent = try await InProcessServer.start(arguments: ["--allow-host", "127.0.0.1"])
        let edge = try await InProcessServer.start(arguments: ["--parent", parent.url("/")])
        let playlist = try await TestHTTP.get(edge.proxied(origin.url("/moved/ts-multivariant/hi/index.m3u8")))
        #expect(playlist.status == 200)
        #expect(
            playlist.text.contains("/o/http/127.0.0.1:\(origin.port)/ts-multivariant/hi/seg0.ts"), "\(playlist.text)")
        #expect(!playlist.text.contains("/moved/"))
        // What a node is told of the redirect: where it ended, without the query it carried (it may be a token).
        let asStored = try await TestHTTP.get(
            parent.proxied(origin.url("/moved/ts-multivariant/lo/index.m3u8?token=s3cret")),
            headers: [("Via", "1.1 edge9 (hlscache)")])
        #expect(asStored.header("content-location") == origin.url("/ts-multivariant/lo/index.m3u8"))
        #expect(asStored.header("vary") == "Via")
        await edge.stop()
        await parent.stop()
    }
}
