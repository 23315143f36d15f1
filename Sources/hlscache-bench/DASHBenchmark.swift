import DASHManifest
import Foundation
import HLSPlaylist

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
    }
}
