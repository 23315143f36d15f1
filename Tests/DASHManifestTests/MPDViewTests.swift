import DASHManifest
import HLSCacheTestTraits
import ManifestURLs
import Testing

/// Manifest views on MPDs: Representations and AdaptationSets filtered, a dynamic MPD's timeline cut to a window.
@Suite("MPD views", .sharedMachine)
struct MPDViewTests {
    static let url = "http://origin.test/live/manifest.mpd"

    static let mpd = """
        <?xml version="1.0"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2026-11-28T18:00:00Z"
             timeShiftBufferDepth="PT3600S" minimumUpdatePeriod="PT2S" profiles="urn:mpeg:dash:profile:isoff-live:2011">
          <Period id="p0" start="PT0S">
            <AdaptationSet contentType="video" mimeType="video/mp4" codecs="avc1.64001f">
              <SegmentTemplate timescale="1000" media="v-$RepresentationID$-$Number$.m4s" initialization="v-$RepresentationID$.mp4" startNumber="10">
                <SegmentTimeline><S t="0" d="2000" r="29"/></SegmentTimeline>
              </SegmentTemplate>
              <Representation id="v360" bandwidth="800000" width="640" height="360"/>
              <Representation id="v1080" bandwidth="5000000" width="1920" height="1080"/>
              <Representation id="hevc" bandwidth="2500000" height="720" codecs="hvc1.1.6.L93"/>
            </AdaptationSet>
            <AdaptationSet contentType="video" mimeType="video/mp4">
              <EssentialProperty schemeIdUri="http://dashif.org/guidelines/trickmode" value="1"/>
              <Representation id="trick" bandwidth="90000" height="360" codecs="avc1.64001f">
                <SegmentBase indexRange="0-100"/>
              </Representation>
            </AdaptationSet>
            <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="en" codecs="mp4a.40.2">
              <Representation id="a-en" bandwidth="128000"><BaseURL>en.mp4</BaseURL></Representation>
            </AdaptationSet>
            <AdaptationSet contentType="audio" mimeType="audio/mp4" lang="fr" codecs="ec-3">
              <Representation id="a-fr" bandwidth="384000"><BaseURL>fr.mp4</BaseURL></Representation>
            </AdaptationSet>
            <AdaptationSet contentType="text" mimeType="text/vtt" lang="de">
              <Representation id="t-de" bandwidth="1000"><BaseURL>de.vtt</BaseURL></Representation>
            </AdaptationSet>
          </Period>
        </MPD>
        """

    static func shown(_ query: String) throws -> (text: String, mpd: MPD) {
        let (bytes, mpd) = try MPDManifest.rewrite(
            Array(mpd.utf8), url: url, mapping: .proxy(base: ""), view: ManifestView(query: query))
        return (String(decoding: bytes, as: UTF8.self), mpd)
    }

    static func representations(_ mpd: MPD) -> [String] {
        mpd.periods.flatMap { $0.adaptationSets.flatMap { $0.representations.map(\.id) } }
    }

    @Test("Representations and AdaptationSets are filtered as HLS variants and renditions are")
    func filters() throws {
        #expect(
            Self.representations(try Self.shown("hlscache.bandwidth=-3M").mpd)
                == ["v360", "hevc", "trick", "a-en", "a-fr", "t-de"])
        #expect(
            Self.representations(try Self.shown("hlscache.height=720-").mpd) == [
                "v1080", "hevc", "a-en", "a-fr", "t-de",
            ])
        // Codecs apply to audio too: the E-AC-3 set goes with the HEVC Representation.
        #expect(
            Self.representations(try Self.shown("hlscache.codecs=avc1,mp4a,wvtt").mpd)
                == ["v360", "v1080", "trick", "a-en", "t-de"])
        #expect(
            Self.representations(try Self.shown("hlscache.audio=fr&hlscache.subtitles=none&hlscache.iframes=none").mpd)
                == ["v360", "v1080", "hevc", "a-fr"])
        #expect {
            try Self.shown("hlscache.bandwidth=10M-")
        } throws: { error in
            (error as? MPDError)?.view?.isUnprocessable == true
        }
    }

    /// Found by an attack: the timescale and start number of an AdaptationSet's template were not taken by its
    /// Representations' timelines, and players asked for segment 30 instead of 1029.
    @Test("a Representation's timeline takes the timescale and start number of the AdaptationSet's template")
    func nestedTemplates() throws {
        let text = """
            <?xml version="1.0"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" availabilityStartTime="2026-11-28T18:00:00Z"
                 minimumUpdatePeriod="PT2S" profiles="urn:mpeg:dash:profile:isoff-live:2011">
              <Period id="p0" start="PT0S">
                <AdaptationSet contentType="video" mimeType="video/mp4">
                  <SegmentTemplate timescale="90000" startNumber="1000" media="v-$Number$.m4s" initialization="v.mp4"/>
                  <Representation id="v" bandwidth="800000">
                    <SegmentTemplate><SegmentTimeline><S t="0" d="180000" r="29"/></SegmentTimeline></SegmentTemplate>
                  </Representation>
                </AdaptationSet>
              </Period>
            </MPD>
            """
        let (bytes, mpd) = try MPDManifest.rewrite(
            Array(text.utf8), url: Self.url, mapping: .proxy(base: ""),
            view: ManifestView(query: "hlscache.window=10"))
        let template = try #require(mpd.periods[0].adaptationSets[0].representations[0].addressing)
        let output = String(decoding: bytes, as: UTF8.self)
        #expect(output.contains("startNumber=\"1025\""), "\(output)")
        #expect(output.contains("<S t=\"4500000\" d=\"180000\" r=\"4\"/>"), "\(template)")
    }

    @Test("a window cuts a dynamic MPD's timeline to its last seconds and moves its start number on")
    func window() throws {
        let (text, mpd) = try Self.shown("hlscache.window=10")
        #expect(text.contains("timeShiftBufferDepth=\"PT10.0S\""), "\(text)")
        let template = try #require(mpd.periods[0].adaptationSets[0].segmentTemplate)
        #expect(template.startNumber == 35)
        let entries = try #require(template.timeline)
        #expect(entries.count == 1 && entries[0].time == 50_000 && entries[0].duration == 2000)
        #expect(entries[0].repeatCount == 4)
        // Never fewer than three segments.
        let tiny = try #require(
            try Self.shown("hlscache.window=1").mpd.periods[0].adaptationSets[0].segmentTemplate)
        #expect(tiny.startNumber == 37 && tiny.timeline?.first?.repeatCount == 2)
        // A window longer than the timeline changes nothing but the depth.
        let long = try Self.shown("hlscache.window=600").mpd.periods[0].adaptationSets[0].segmentTemplate
        #expect(long?.startNumber == 10)
    }
}
