import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

@testable import DASHManifest

/// What the model says of real packages, and how bad input is refused.
@Suite("MPD parsing", .sharedMachine)
struct MPDParsingTests {
    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: TestPaths.fixtures.appendingPathComponent(name)))
    }

    @Test("ffmpeg's SegmentTemplate with a SegmentTimeline")
    func timeline() throws {
        let mpd = try MPDManifest.parse(try Self.fixture("streams/dash-timeline/manifest.mpd"), url: "http://h/m.mpd")
        #expect(mpd.type == .static)
        #expect(mpd.mediaPresentationDuration == 6)
        #expect(mpd.periods.count == 1)
        let sets = mpd.periods[0].adaptationSets
        #expect(sets.map(\.representations.count) == [1, 1])
        guard case .template(let video)? = sets[0].representations[0].addressing else {
            Issue.record("a template")
            return
        }
        #expect(video.media == "chunk-$RepresentationID$-$Number%05d$.m4s")
        #expect(video.timescale == 10240)
        #expect(video.timeline == [TimelineEntry(time: 0, duration: 20480, repeatCount: 2)])
    }

    @Test("ffmpeg's $Number$ with @duration, and its SegmentList")
    func numberAndList() throws {
        let number = try MPDManifest.parse(try Self.fixture("streams/dash-number/manifest.mpd"), url: "http://h/m.mpd")
        guard case .template(let template)? = number.periods[0].adaptationSets[0].representations[0].addressing else {
            Issue.record("a template")
            return
        }
        #expect(template.timeline == nil)
        #expect(template.duration != nil)
        let list = try MPDManifest.parse(try Self.fixture("streams/dash-list/manifest.mpd"), url: "http://h/m.mpd")
        guard case .list(let segments)? = list.periods[0].adaptationSets[0].representations[0].addressing else {
            Issue.record("a list")
            return
        }
        #expect(segments.initialization?.sourceURL == "init-0.m4s")
        #expect(segments.segments.map(\.media) == ["chunk-0-00001.m4s", "chunk-0-00002.m4s", "chunk-0-00003.m4s"])
    }

    @Test("a dynamic MPD, inheritance from the AdaptationSet, SegmentBase and xs:duration forms")
    func dynamicAndInheritance() throws {
        let mpd = try MPDManifest.parse(try Self.fixture("mpd/baseurls.mpd"), url: "https://o/m.mpd")
        #expect(mpd.type == .dynamic)
        #expect(mpd.minimumUpdatePeriod == 2)
        #expect(mpd.baseURLs == ["https://cdn.example/live/"])
        #expect(mpd.locations == ["https://origin.example/live/manifest.mpd?token=abc"])
        #expect(mpd.periods.count == 3)
        guard case .template(let inherited)? = mpd.periods[0].adaptationSets[0].representations[1].addressing else {
            Issue.record("the AdaptationSet's template")
            return
        }
        #expect(inherited.startNumber == 5)
        guard case .base(let base)? = mpd.periods[2].adaptationSets[0].representations[1].addressing else {
            Issue.record("a SegmentBase")
            return
        }
        #expect(base.indexRange == "800-1499")
        #expect(ISODuration.seconds("P1DT2H3M4.5S") == 93_784.5)
        #expect(ISODuration.seconds("PT0S") == 0)
        #expect(ISODuration.seconds("PT") == nil)
        #expect(ISODuration.seconds("-PT1S") == nil)
        #expect(ISODuration.seconds("P99999999999Y") == nil)
    }

    @Test(
        "XXE and billion-laughs documents are refused before libxml2 reads a declaration",
        arguments: [
            "mpd/hostile-xxe.mpd", "mpd/hostile-billion-laughs.mpd",
        ])
    func hostileDocuments(path: String) throws {
        let start = ContinuousClock.now
        #expect(throws: MPDError(.documentType, "a document type declaration is not allowed in an MPD", line: 2)) {
            _ = try MPDManifest.parse(try Self.fixture(path), url: "http://h/m.mpd")
        }
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test("not well-formed, not an MPD, a missing or out-of-range attribute: a reason and the line")
    func invalidDocuments() {
        func error(_ text: String) -> MPDError? {
            do {
                _ = try MPDManifest.parse(Array(text.utf8), url: "http://h/m.mpd")
                return nil
            } catch {
                return error
            }
        }
        let broken = error("<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\">\n<Period>\n</MPD>")
        #expect(broken?.kind == .notWellFormed)
        #expect(broken?.line == 3)
        #expect(error("<html><body/></html>")?.kind == .notAnMPD)
        #expect(error("")?.kind == .notWellFormed)
        let missing = error(
            "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\"><Period><AdaptationSet>\n<Representation id=\"a\"/>"
                + "</AdaptationSet></Period></MPD>")
        #expect(missing == MPDError(.invalidValue, "Representation a without @bandwidth", line: 2))
        #expect(
            error("<MPD type=\"dynamic\" minimumUpdatePeriod=\"PT99999999999999S\"/>")?.kind == .invalidValue)
        #expect(
            error(
                "<MPD><Period><AdaptationSet><Representation id=\"a\" bandwidth=\"99999999999999999999\"/>"
                    + "</AdaptationSet></Period></MPD>")?.kind == .invalidValue)
    }

    @Test("an MPD is told from other bodies by its root element")
    func sniffing() {
        #expect(MPDManifest.looksLikeMPD(Array("<?xml version=\"1.0\"?>\n<!-- c -->\n<MPD xmlns=\"x\">".utf8)))
        #expect(MPDManifest.looksLikeMPD(Array("<dash:MPD>".utf8)))
        #expect(!MPDManifest.looksLikeMPD(Array("<?xml version=\"1.0\"?><html>".utf8)))
        #expect(!MPDManifest.looksLikeMPD(Array("#EXTM3U".utf8)))
    }
}
