import DASHManifest
import Foundation
import HLSPlaylist
import ManifestURLs
import SegmentCache

/// `hlscache-bench dash-generate FILE` writes the benchmark's MPD; `hlscache-bench dash FILE` times parse +
/// rewrite + serialize of it (`dash_rewrite_ms`), the same work `bench/tools/dash_lxml.py` does with lxml.
enum DASHBenchmark {
    /// A static MPD with `representations` Representations of `segments` `SegmentURL`s each, under an
    /// AdaptationSet `BaseURL` (so relative media stay relative) plus one absolute URL in ten.
    static func generatedMPD(representations: Int = 5, segments: Int = 3_600) -> [UInt8] {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT2H"
                 profiles="urn:mpeg:dash:profile:full:2011" minBufferTime="PT2S">
              <Period id="0">
                <AdaptationSet id="0" mimeType="video/mp4">

            """
        for representation in 0..<representations {
            text += "      <Representation id=\"r\(representation)\" bandwidth=\"\((representation + 1) * 500_000)\">\n"
            text += "        <SegmentList timescale=\"1000\" duration=\"2000\">\n"
            text += "          <Initialization sourceURL=\"r\(representation)/init.mp4\"/>\n"
            for segment in 0..<segments {
                if segment % 10 == 0 {
                    text +=
                        "          <SegmentURL media=\"https://cdn\(segment % 3).example.com/vod/r\(representation)/"
                    text += "seg-\(segment).m4s?exp=1700000000&amp;sig=0a1b2c\"/>\n"
                } else {
                    text += "          <SegmentURL media=\"/vod/r\(representation)/seg-\(segment).m4s\"/>\n"
                }
            }
            text += "        </SegmentList>\n      </Representation>\n"
        }
        text += "    </AdaptationSet>\n  </Period>\n</MPD>\n"
        return Array(text.utf8)
    }

    /// Prints `dash_rewrite_ms` and `dash_mpd_urls` for the MPD at `path`.
    static func run(path: String) throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let url = "https://origin.example.com/vod/manifest.mpd"
        let mapping = URIMapping.proxy(base: "http://127.0.0.1:8080")
        var output: [UInt8] = []
        for _ in 0..<5 { output = try MPDManifest.rewrite(bytes, url: url, mapping: mapping).bytes }
        let median = try medianMilliseconds(runs: 31) {
            output = try MPDManifest.rewrite(bytes, url: url, mapping: mapping).bytes
        }
        precondition(output.count > bytes.count)
        let urls = String(decoding: bytes, as: UTF8.self).components(separatedBy: "SegmentURL media=").count - 1
        print("dash_mpd_urls \(urls)")
        print("dash_rewrite_ms \(String(format: "%.2f", median))")
        try expansionWorstCases()
    }

    /// The render's worst cases that the expansion limits let through, and the probe's MPD they refuse: how long the
    /// responder's task (on an event loop's thread) can spend on one MPD.
    /// - `dash_expand_100k_ms`: parse, rewrite and list the segments (with their keys) of an MPD at the limit:
    ///   four Representations of 25,000 segments from a 70-character template (their URLs near the byte bound).
    /// - `dash_expand_refused_ms`: the same for the hardening probe's 2.5 KB MPD (1.5 million URLs of 2 KB), which
    ///   is refused by counting.
    static func expansionWorstCases() throws {
        let url = "https://origin.example.com/live/manifest.mpd"
        let mapping = URIMapping.proxy(base: "http://127.0.0.1:8080")
        func mpd(template: String, period: String, representations: Int) -> [UInt8] {
            let reps = (0..<representations).map { "<Representation id=\"v\($0)\" bandwidth=\"1\"/>" }.joined()
            return Array(
                """
                <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="\(period)">
                <Period><AdaptationSet><SegmentTemplate media="\(template)" duration="1"/>\(reps)</AdaptationSet>
                </Period></MPD>
                """.utf8)
        }
        func render(_ bytes: [UInt8]) -> Int {
            guard let rewritten = try? MPDManifest.rewrite(bytes, url: url, mapping: mapping),
                let listed = try? rewritten.mpd.objectsByRepresentation(documentURL: url)
            else { return 0 }
            return listed.reduce(0) { sum, representation in
                sum + representation.objects.reduce(0) { $0 + CacheKey(url: $1.url).url.utf8.count }
            }
        }
        let atLimit = mpd(
            template: String(repeating: "p", count: 40) + "/$RepresentationID$/$Number%08d$.m4s", period: "PT25000S",
            representations: 4)
        var listed = 0
        let worst = medianMilliseconds(runs: 5) { listed = render(atLimit) }
        precondition(listed > 0, "the MPD at the limit was refused")
        print("dash_expand_100k_ms \(String(format: "%.1f", worst))")
        let probe = mpd(
            template: String(repeating: "a", count: 2_000) + "$Number$.m4s", period: "PT500000S", representations: 3)
        let refused = medianMilliseconds(runs: 11) { listed = render(probe) }
        precondition(listed == 0, "the probe's MPD was listed")
        print("dash_expand_refused_ms \(String(format: "%.3f", refused))")
    }
}
