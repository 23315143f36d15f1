import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import HLSPlaylist
import ManifestURLs
import Testing

@Suite("Proxy URL and custom scheme mappings", .sharedMachine)
struct ProxyURLTests {
    static let oddURLs = [
        "http://[::1]:8080/x",
        "https://cdn.example.com:8443/live/a.m3u8?t=1",
        "https://cdn.example.com/a%2Fb/c%20d.ts?x=%41&y=a+b",
        "https://cdn.example.com/path with+plus/%20seg.ts",
        "https://cdn.example.com/vidéo/séquence-1.ts?nom=é",
        "https://cdn.example.com/seg.ts?",
        "https://cdn.example.com",
        "https://cdn.example.com?q=1",
        "https://user:pass@cdn.example.com/x.ts",
        "HTTPS://CDN.example.com/UPPER.TS",
        "https://cdn.example.com/seg.ts#t=10",
        "http://[2001:db8::1]/v6.m3u8",
    ]

    @Test("the proxy form is readable and keeps the last path component")
    func proxyFormIsReadable() {
        #expect(
            ProxyURL.make(origin: "https://cdn.example.com:8443/live/a.m3u8?t=1", base: "http://127.0.0.1:8080")
                == "http://127.0.0.1:8080/o/https/cdn.example.com:8443/live/a.m3u8?t=1")
        #expect(ProxyURL.make(origin: "https://cdn.example.com/a.ts", base: "") == "/o/https/cdn.example.com/a.ts")
        #expect(
            ProxyURL.make(origin: "https://cdn.example.com/a.ts", base: "http://h/")
                == "http://h/o/https/cdn.example.com/a.ts")
    }

    @Test("origin(proxy(u)) == u for odd URLs", arguments: oddURLs)
    func proxyRoundTripsOddURLs(_ url: String) throws {
        let proxied = try #require(ProxyURL.make(origin: url, base: ""))
        #expect(ProxyURL.origin(fromPath: proxied) == url)
        let absolute = try #require(ProxyURL.make(origin: url, base: "http://front.local:8080"))
        #expect(ProxyURL.origin(fromProxyURL: absolute, base: "http://front.local:8080") == url)
        let custom = try #require(CustomSchemeURL.make(origin: url))
        #expect(CustomSchemeURL.origin(from: custom) == url)
    }

    @Test("origin(proxy(u)) == u for every absolute URI of the corpus")
    func proxyRoundTripsEveryCorpusURL() throws {
        var checked = 0
        for file in try TestPaths.corpusFiles() {
            guard let playlist = try? Playlist(parsing: [UInt8](Data(contentsOf: file))) else { continue }
            for uri in playlist.uriPlaceTexts
            where uri.lowercased().hasPrefix("http://") || uri.lowercased().hasPrefix("https://") {
                guard let proxied = ProxyURL.make(origin: uri, base: "") else { continue }
                #expect(ProxyURL.origin(fromPath: proxied) == uri)
                checked += 1
            }
        }
        #expect(checked > 1000)
    }

    @Test("non-http URLs and malformed proxy paths are refused")
    func refusesWhatIsNotHTTP() {
        #expect(ProxyURL.make(origin: "skd://key", base: "") == nil)
        #expect(ProxyURL.make(origin: "data:text/plain,x", base: "") == nil)
        #expect(ProxyURL.make(origin: "/relative/path", base: "") == nil)
        #expect(ProxyURL.make(origin: "https:///no-host", base: "") == nil)
        #expect(ProxyURL.origin(fromPath: "/o/ftp/host/x") == nil)
        #expect(ProxyURL.origin(fromPath: "/o/https//x") == nil)
        #expect(ProxyURL.origin(fromPath: "/o/https") == nil)
        #expect(ProxyURL.origin(fromPath: "/live/a.m3u8") == nil)
        #expect(CustomSchemeURL.origin(from: "https://x") == nil)
    }
}
