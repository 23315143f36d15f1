import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import ManifestURLs
import Testing

@testable import DASHManifest

/// Every URL a player fetches from an MPD comes back to hlscache, once, and nothing else in the document changes:
/// checked against a reader written apart from the rewriter (Foundation's XML parser and URL resolution).
@Suite("MPD rewriting", .sharedMachine)
struct MPDRewriteTests {
    static let cache = "http://cache.test:8080"
    static let documentURL = "https://origin.example/live/manifest.mpd"

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: TestPaths.fixtures.appendingPathComponent(name)))
    }

    /// Rewrites `input` and checks it against the independent reader.
    /// - Parameters:
    ///   - documentURL: where the origin's MPD is, after redirects.
    ///   - requestedURL: the URL the player asked hlscache for (the same unless the origin redirected).
    static func checkRewrite(
        _ input: [UInt8], documentURL: String = documentURL, requestedURL: String? = nil
    ) throws {
        let output = try MPDManifest.rewrite(input, url: documentURL, mapping: .proxy(base: cache)).bytes
        let before = try #require(IndependentMPDReader.parse(input))
        let after = try #require(IndependentMPDReader.parse(output))
        // The player loads the rewritten MPD from the proxy URL it asked for.
        let proxiedDocument = try #require(ProxyURL.make(origin: requestedURL ?? documentURL, base: cache))
        let wanted = IndependentMPDReader.places(before, documentURL: documentURL)
        let fetched = IndependentMPDReader.places(after, documentURL: proxiedDocument)
        #expect(wanted.map(\.0) == fetched.map(\.0), "the same URL places, in the same order")
        for ((place, origin), (_, proxied)) in zip(wanted, fetched) {
            #expect(proxied.hasPrefix(cache + ProxyURL.pathPrefix), "\(place) is fetched from \(proxied)")
            let back = ProxyURL.origin(fromProxyURL: proxied, base: cache)
            #expect(back == origin, "\(place): \(proxied) is not \(origin)")
            #expect(back.map { !$0.contains(ProxyURL.pathPrefix) } ?? false, "\(place) mapped twice: \(proxied)")
        }
        #expect(IndependentMPDReader.rest(before) == IndependentMPDReader.rest(after), "nothing else changed")
    }

    @Test("BaseURL at four levels, several per level, templates, lists, bases, xlink, Location and steering")
    func handWrittenPlaces() throws {
        let input = try Self.fixture("mpd/baseurls.mpd")
        try Self.checkRewrite(input)
        let text = String(
            decoding: try MPDManifest.rewrite(input, url: Self.documentURL, mapping: .proxy(base: Self.cache)).bytes,
            as: UTF8.self)
        // Left alone: the time source, the license server, an unknown namespace, comments and template identifiers.
        #expect(text.contains("value=\"https://time.example/iso\""))
        #expect(text.contains("<dashif:Laurl>https://license.example/widevine</dashif:Laurl>"))
        #expect(text.contains("x:endpoint=\"https://telemetry.example/beacon\""))
        #expect(text.contains("<!-- Hand-written"))
        #expect(text.contains("$RepresentationID$/$Number%05d$.m4s"))
        #expect(text.contains("?x=$$"))
    }

    @Test(
        "the ffmpeg and MP4Box packages: every segment URL comes back to the cache",
        arguments: [
            "streams/dash-timeline/manifest.mpd", "streams/dash-number/manifest.mpd", "streams/dash-list/manifest.mpd",
        ])
    func packagedStreams(path: String) throws {
        try Self.checkRewrite(try Self.fixture(path), documentURL: "http://127.0.0.1:9/dash/manifest.mpd")
    }

    @Test("an MPD the origin redirected elsewhere: its relative URLs still name the objects beside it")
    func redirectedDocument() throws {
        try Self.checkRewrite(
            try Self.fixture("streams/dash-timeline/manifest.mpd"),
            documentURL: "https://cdn2.example/a/b/manifest.mpd",
            requestedURL: "https://origin.example/live/manifest.mpd")
    }

    @Test("reverse mode: the origin's own URLs become plain paths, others the proxy form")
    func reverseMapping() throws {
        let mapping = URIMapping.custom { url in
            url.hasPrefix("https://cdn.example/") ? "/" + url.dropFirst("https://cdn.example/".count) : nil
        }
        let output = try MPDManifest.rewrite(
            try Self.fixture("mpd/baseurls.mpd"), url: Self.documentURL, mapping: mapping
        ).bytes
        let text = String(decoding: output, as: UTF8.self)
        #expect(text.contains("<BaseURL>/live/</BaseURL>"))
        #expect(text.contains("<BaseURL>/period0/</BaseURL>"))
    }
}
