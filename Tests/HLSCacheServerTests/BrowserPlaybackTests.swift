import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

/// Web players in a real browser: headless Chromium plays through hlscache from a page on another origin.
@Suite("Web players in Chromium", .serialized, .sharedMachine)
struct BrowserPlaybackTests {
    static let streams = ["ts-multivariant/master.m3u8", "fmp4/index.m3u8", "aes128/index.m3u8"]

    @Test("video.js (MSE) on another origin and Chromium's own player play TS, fMP4 and AES-128 for 5 s")
    func webPlayersPlayThroughTheCache() async throws {
        try await Browser.prepare()
        let page = StreamOrigin(root: try Browser.pageFolder())
        try await page.start()
        defer { page.stop() }
        try await withServer { server, origin in
            let pages = ["vhs", "native"].flatMap { mode in
                Self.streams.map { stream in
                    Browser.pageURL(page.url(""), source: server.proxied(origin.url("/" + stream)), mode: mode)
                }
            }
            for playback in try await Browser.play(pages, seconds: 5, timeout: 90) {
                #expect(playback.played(5), "\(playback)")
            }
            #expect(
                try await server.settledLog().contains("cache=MISS"), "the players did not go through hlscache")
        }
    }

    @Test(
        "on an HTTPS page of another origin, video.js (MSE) and Chromium's own player play through https:// hlscache; through http:// it is mixed content, blocked"
    )
    func httpsPagePlaysThroughHTTPS() async throws {
        try await Browser.prepare()
        let certificates = try await TestCertificates.make()
        let leaf = try await certificates.leaf("server")
        let spki = try await certificates.publicKeyHash(of: leaf)
        let page = try HTTPSPageServer(
            folder: try Browser.pageFolder(), certificatePath: leaf.certificatePath, keyPath: leaf.keyPath)
        defer { page.stop() }
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        let server = try await TLSServerProcess.start(arguments: [
            "--allow-host", "127.0.0.1", "--tls-certificate", leaf.certificatePath, "--tls-key", leaf.keyPath,
        ])
        // hlscache by a name of its own (127.0.0.1 itself is a secure origin to a browser, whatever its scheme).
        let path = "/o/http/127.0.0.1:\(origin.port)/"
        let host = Browser.testHost
        let secure = ["vhs", "native"].flatMap { mode in
            Self.streams.map {
                Browser.pageURL(page.base, source: "https://\(host):\(server.tlsPort ?? 0)" + path + $0, mode: mode)
            }
        }
        let mixed = Browser.pageURL(
            page.base, source: "http://\(host):\(server.port)" + path + Self.streams[0], mode: "vhs")
        let playbacks = try await Browser.play(
            secure + [mixed], seconds: 5, timeout: 90, trusting: spki, loopbackNames: [host])
        for playback in playbacks.dropLast() { #expect(playback.played(5), "\(playback)") }
        let blocked = try #require(playbacks.last)
        #expect(!blocked.played(1), "the http:// source played on an https page: \(blocked)")
        #expect(blocked.console.contains { $0.contains("Mixed Content") }, "\(blocked)")
        await server.stop()
    }

    @Test("with --cors-origin none, video.js on another origin is blocked: the CORS headers are what lets it play")
    func withoutCORSTheWebPlayerIsBlocked() async throws {
        try await Browser.prepare()
        let page = StreamOrigin(root: try Browser.pageFolder())
        try await page.start()
        defer { page.stop() }
        try await withServer(arguments: ["--cors-origin", "none"]) { server, origin in
            let source = server.proxied(origin.url("/fmp4/index.m3u8"))
            let playback = try #require(
                try await Browser.play(
                    [Browser.pageURL(page.url(""), source: source, mode: "vhs")], seconds: 5, timeout: 30
                )
                .first)
            #expect(!playback.played(1), "\(playback)")
            #expect(playback.console.contains { $0.contains("CORS policy") }, "\(playback)")
        }
    }

    @Test("the status page links a busy stream to hlscache's player page, which plays it in Chromium's own player")
    func statusPageLinksAPlayerPage() async throws {
        try await Browser.prepare()
        try await withServer { server, origin in
            let stream = origin.url("/fmp4/index.m3u8")
            #expect(try await TestHTTP.get(server.proxied(stream)).status == 200)
            let status = try await TestHTTP.get(server.url("/")).text
            let link = try #require(
                status.components(separatedBy: "<a href=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
                    .first { $0.hasPrefix("/play?") },
                "no player link on the status page: \(status)")
            let path = link.replacingOccurrences(of: "&amp;", with: "&")
            let page = try await TestHTTP.get(server.url(path))
            #expect(page.status == 200 && page.text.contains("<video"), "\(page.text)")
            let playback = try #require(try await Browser.play([server.url(path)], seconds: 3, timeout: 60).first)
            #expect(playback.played(3), "\(playback)")
            #expect(try await TestHTTP.get(server.url("/play?src=https://elsewhere.test/a.m3u8")).status == 400)
            let secret = "/o/http/127.0.0.1:1/a.m3u8?token=secret".addingPercentEncoding(
                withAllowedCharacters: .alphanumerics)!
            #expect(try await TestHTTP.get(server.url("/play?src=" + secret)).status == 400, "a page showed a token")
        }
    }

    @Test("video.js (MSE) and Chromium's own player play a filtered multivariant playlist; video.js a filtered MPD")
    func browsersPlayAView() async throws {
        try await Browser.prepare()
        let page = StreamOrigin(root: try Browser.pageFolder())
        try await page.start()
        defer { page.stop() }
        try await withServer { server, origin in
            origin.set(
                "/dash-timeline/two.mpd",
                .body(
                    try ManifestViewServeTests.dashWithMissingRepresentation(origin),
                    contentType: "application/dash+xml"))
            let source = server.proxied(origin.url("/ts-multivariant/master.m3u8")) + "?hlscache.bandwidth=-100k"
            let dash = server.proxied(origin.url("/dash-timeline/two.mpd")) + "?hlscache.bandwidth=-1M"
            var pages = ["vhs", "native"].map { Browser.pageURL(page.url(""), source: source, mode: $0) }
            pages.append(Browser.pageURL(page.url(""), source: dash, mode: "vhs"))
            for playback in try await Browser.play(pages, seconds: 5, timeout: 90) {
                #expect(playback.played(5), "\(playback)")
            }
            #expect(!origin.counts.keys.contains { $0.hasPrefix("/ts-multivariant/hi/") })
            #expect(!origin.counts.keys.contains { $0.contains("-9") } && origin.count("/dash-timeline/two.mpd") > 0)
        }
    }
}
