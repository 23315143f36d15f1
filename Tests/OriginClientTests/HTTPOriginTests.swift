import HLSCacheTestTraits
import OriginClient
import Testing

/// Configured URLs (`--origin`, `--parent`, `--fleet-url`, prefetch's `--server`) are read by one type: an absolute
/// http(s) URL with a host, its port defaulted by its scheme, written as an address policy's `host:port`.
@Suite("Configured origin URLs", .sharedMachine)
struct HTTPOriginTests {
    @Test("an absolute http(s) URL gives its scheme, host and port, the scheme's default port when none is named")
    func readsSchemeHostAndPort() throws {
        let plain = try #require(HTTPOrigin(url: "http://cdn.example/live/"))
        #expect(plain.scheme == "http" && plain.host == "cdn.example" && plain.port == 80)
        #expect(plain.hostAndPort == "cdn.example:80")
        let secure = try #require(HTTPOrigin(url: "HTTPS://cdn.example:8443/x"))
        #expect(secure.scheme == "https" && secure.port == 8443)
        let six = try #require(HTTPOrigin(url: "https://[::1]/"))
        #expect(six.port == 443 && six.hostAndPort == "[::1]:443")
        #expect(!plain.hasMoreThanABase)
        #expect(HTTPOrigin(url: "http://user:pw@cdn.example/")?.hasMoreThanABase == true)
        #expect(HTTPOrigin(url: "http://cdn.example/?token=1")?.hasMoreThanABase == true)
    }

    @Test("anything else is no origin: another scheme, no host, a relative or broken URL")
    func refusesTheRest() {
        for url in ["ftp://cdn.example/", "http:///path", "/relative", "cdn.example", "", "http://[::1", "file:///etc"]
        {
            #expect(HTTPOrigin(url: url) == nil, "\(url)")
        }
    }
}
