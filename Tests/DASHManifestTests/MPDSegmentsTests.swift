import Foundation
import HLSCacheTestTraits
import HLSCacheTesting
import Testing

@testable import DASHManifest

/// Every object a player of a static MPD fetches, computed from the MPD: what prefetch stores.
@Suite("MPD segments", .sharedMachine)
struct MPDSegmentsTests {
    static func objects(_ path: String, url: String = "http://o/d/manifest.mpd") throws -> [MPDObject] {
        let bytes = Array(try Data(contentsOf: TestPaths.fixtures.appendingPathComponent(path)))
        return try MPDManifest.parse(bytes, url: url).objects(documentURL: url)
    }

    /// The files of a fixture package's folder that a player of it fetches.
    static func files(_ package: String) throws -> Set<String> {
        let folder = TestPaths.streams.appendingPathComponent(package)
        return Set(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0 != "manifest.mpd" })
    }

    @Test(
        "SegmentTimeline, $Number$ with @duration and SegmentList name exactly the package's files",
        arguments: [
            "dash-timeline", "dash-number", "dash-list",
        ])
    func templatesAndLists(package: String) throws {
        let objects = try Self.objects("streams/\(package)/manifest.mpd")
        #expect(objects.allSatisfy { $0.url.hasPrefix("http://o/d/") && $0.range == nil })
        let named = Set(objects.map { String($0.url.dropFirst("http://o/d/".count)) })
        // ffmpeg writes a fourth, 256-sample audio segment that a $Number$ MPD of 6.0 s does not count.
        let unlisted: Set<String> = package == "dash-number" ? ["chunk-1-00004.m4s"] : []
        #expect(named == (try Self.files(package)).subtracting(unlisted))
        #expect(objects.count == Set(objects).count, "no object twice")
        #expect(objects.filter { $0.role == .initialization }.count == 2)
    }

    @Test("SegmentBase: the initialization and index ranges, and the file; a byte-range list: its ranges")
    func byteRanges() throws {
        let ondemand = try Self.objects("streams/dash-ondemand/manifest.mpd")
        let video = ondemand.filter { $0.url == "http://o/d/video.mp4" }
        #expect(video.map(\.role) == [.initialization, .index, .media])
        #expect(video[0].range?.lowerBound == 0)
        #expect(video[1].range != nil)
        #expect(video[2].range == nil)
        let ranges = try Self.objects("streams/dash-ranges/manifest.mpd")
        #expect(Set(ranges.map(\.url)) == ["http://o/d/manifest-stream0.mp4", "http://o/d/manifest-stream1.mp4"])
        #expect(ranges.allSatisfy { $0.range != nil })
    }

    @Test("template identifiers: widths, $$, $Bandwidth$ and $Time$; r=-1 repeats to the period's end")
    func identifiersAndRepeats() throws {
        let mpd = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT10S">
              <Period><AdaptationSet>
                <SegmentTemplate timescale="10" initialization="i-$Bandwidth%08d$.mp4"
                                 media="$RepresentationID$/$Time$-$Number%03d$$$.m4s" startNumber="7">
                  <SegmentTimeline><S t="0" d="20" r="1"/><S d="30" r="-1"/></SegmentTimeline>
                </SegmentTemplate>
                <Representation id="v" bandwidth="500000"/>
              </AdaptationSet></Period>
            </MPD>
            """
        let objects = try MPDManifest.parse(Array(mpd.utf8), url: "https://h/a/m.mpd").objects(
            documentURL: "https://h/a/m.mpd")
        #expect(
            objects.map(\.url) == [
                "https://h/a/i-00500000.mp4", "https://h/a/v/0-007$.m4s", "https://h/a/v/20-008$.m4s",
                "https://h/a/v/40-009$.m4s", "https://h/a/v/70-010$.m4s",
            ])
    }

    @Test("a template whose segments cannot be counted, or are too many, is an error, not a hang")
    func uncountable() throws {
        func objects(_ template: String, duration: String = "PT10S") throws -> [MPDObject] {
            let mpd = """
                <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="\(duration)">
                <Period><AdaptationSet>\(template)<Representation id="v" bandwidth="1"/></AdaptationSet></Period></MPD>
                """
            return try MPDManifest.parse(Array(mpd.utf8), url: "https://h/m.mpd").objects(
                documentURL: "https://h/m.mpd")
        }
        #expect(throws: MPDError.self) { try objects("<SegmentTemplate media=\"$Number$\"/>") }
        #expect(throws: MPDError.self) {
            try objects("<SegmentTemplate media=\"$Number$\" duration=\"1\"/>", duration: "P100Y")
        }
        #expect(throws: MPDError.self) {
            try objects(
                "<SegmentTemplate media=\"$Number$\"><SegmentTimeline><S d=\"1\" r=\"999999999\"/>"
                    + "</SegmentTimeline></SegmentTemplate>")
        }
        #expect(try objects("<SegmentTemplate media=\"s$Number$\" duration=\"2\"/>").count == 5)
    }
}
