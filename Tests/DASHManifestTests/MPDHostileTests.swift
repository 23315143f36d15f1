import DASHManifest
import Foundation
import HLSCacheTestTraits
import ManifestURLs
import Testing

/// MPDs an origin (or any URL a viewer names) may send to take the process down: every number overflows into an
/// error with its line, and every expansion is bounded before anything is built.
@Suite("Hostile MPDs", .sharedMachine)
struct MPDHostileTests {
    static let url = "https://h/d/m.mpd"

    /// A static MPD of one period of `period` with `template` in its AdaptationSet and `representations`.
    static func mpd(_ template: String, period: String = "PT100S", representations: Int = 1) -> [UInt8] {
        let reps = (0..<representations).map { "<Representation id=\"v\($0)\" bandwidth=\"1\"/>" }.joined()
        return Array(
            """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="\(period)">
            <Period><AdaptationSet>
            \(template)
            \(reps)</AdaptationSet></Period></MPD>
            """.utf8)
    }

    /// The numbers of the hardening probe (issue item 1): each crashed the process with "arithmetic overflow".
    static let overflowing = [
        #"<SegmentTemplate media="s$Number$.m4s" duration="1" timescale="1" startNumber="9223372036854775807"/>"#,
        #"<SegmentTemplate media="s$Number$.m4s" startNumber="9223372036854775807"><SegmentTimeline>"#
            + #"<S t="0" d="1" r="3"/></SegmentTimeline></SegmentTemplate>"#,
        #"<SegmentTemplate media="s$Time$.m4s" timescale="100000000000000000"><SegmentTimeline>"#
            + #"<S t="0" d="1" r="-1"/></SegmentTimeline></SegmentTemplate>"#,
        #"<SegmentTemplate media="s$Number$.m4s" duration="4611686018427387904" timescale="9223372036854775807"/>"#,
        #"<SegmentTemplate media="s$Time$.m4s"><SegmentTimeline><S t="9223372036854775800" d="5" r="3"/>"#
            + #"</SegmentTimeline></SegmentTemplate>"#,
        #"<SegmentTemplate media="s$Time$.m4s"><SegmentTimeline><S t="0" d="9223372036854775807" r="9223372036854775807"/>"#
            + #"</SegmentTimeline></SegmentTemplate>"#,
    ]

    @Test(
        "segment numbers and times that overflow are an invalid MPD naming the line, never a trap",
        arguments: overflowing)
    func overflowingNumbersAreErrors(template: String) throws {
        let error = #expect(throws: MPDError.self) { try MPDManifest.parse(Self.mpd(template), url: Self.url) }
        #expect(error?.kind == .invalidValue, "\(String(describing: error))")
        #expect(error?.line == 3, "\(String(describing: error))")
        // Rewriting (the server's render) refuses it the same way.
        #expect(throws: MPDError.self) {
            try MPDManifest.rewrite(Self.mpd(template), url: Self.url, mapping: .proxy(base: "http://127.0.0.1:1"))
        }
    }

    @Test("a start number near the top still lists the segments that fit")
    func numbersThatFitAreListed() throws {
        let template =
            #"<SegmentTemplate media="s$Number$.m4s" duration="1" startNumber="9223372036854775800"/>"#
        let objects = try MPDManifest.parse(Self.mpd(template, period: "PT3S"), url: Self.url).objects(
            documentURL: Self.url)
        #expect(objects.map(\.url) == (0..<3).map { "https://h/d/s\(9_223_372_036_854_775_800 + $0).m4s" })
    }

    @Test("the expansion is counted before anything is built: a 2.5 KB MPD asking for gigabytes is refused")
    func expansionIsBoundedBeforeItIsBuilt() throws {
        // The probe's MPD (issue item 3): 500,000 s of 1 s segments, a 2,000-character template, three
        // Representations: 1.5 million URLs of 2 KB each. It took 95 s and 3.15 GB before; now nothing is built.
        let media = String(repeating: "a", count: 2_000) + "$Number$.m4s"
        let bytes = Self.mpd(
            "<SegmentTemplate media=\"\(media)\" duration=\"1\"/>", period: "PT500000S", representations: 3)
        let mpd = try MPDManifest.parse(bytes, url: Self.url)
        let error = #expect(throws: MPDError.self) { try mpd.objectsByRepresentation(documentURL: Self.url) }
        #expect(error?.reason.contains("segments") == true, "\(String(describing: error))")
        // Within the segment count, but over the bytes of URLs: refused as well.
        let limits = ExpansionLimits(maxSegments: 1_000_000, maxSegmentsPerRepresentation: 1_000_000)
        let short = try MPDManifest.parse(
            Self.mpd("<SegmentTemplate media=\"\(media)\" duration=\"1\"/>", period: "PT50000S"), url: Self.url)
        let bytesError = #expect(throws: MPDError.self) {
            try short.objectsByRepresentation(documentURL: Self.url, limits: limits)
        }
        #expect(bytesError?.reason.contains("bytes") == true, "\(String(describing: bytesError))")
        // The whole MPD's count: three Representations of 40,000 each pass one by one, not together.
        let three = try MPDManifest.parse(
            Self.mpd(
                "<SegmentTemplate media=\"$Number$.m4s\" duration=\"1\"/>", period: "PT40000S", representations: 3),
            url: Self.url)
        #expect(throws: MPDError.self) { try three.objectsByRepresentation(documentURL: Self.url) }
        #expect(
            try three.objectsByRepresentation(documentURL: Self.url) { $0.id == "v0" }.first?.objects.count == 40_000)
    }

    @Test("a rewritten MPD is bounded by bytes: nested relative BaseURLs cannot make a 405 MB answer")
    func rewriteOutputIsBounded() throws {
        // The probe's document (issue item 4): 100 nested elements each with a 1,000-character relative BaseURL,
        // then 4,000 BaseURLs at the bottom.
        let segment = String(repeating: "b", count: 1_000) + "/"
        var text = "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" type=\"static\">"
        for _ in 0..<100 { text += "<Period><BaseURL>\(segment)</BaseURL>" }
        text += String(repeating: "<BaseURL>x/</BaseURL>", count: 4_000)
        text += String(repeating: "</Period>", count: 100) + "</MPD>"
        let error = #expect(throws: MPDError.self) {
            try MPDManifest.rewrite(Array(text.utf8), url: Self.url, mapping: .proxy(base: "http://127.0.0.1:1"))
        }
        #expect(error?.kind == .tooLarge, "\(String(describing: error))")
    }

    @Test("an element with more attributes than the limit is refused by a byte scan before libxml2 sees it")
    func attributeFloodIsRefusedBeforeParsing() throws {
        // The probe's document (issue item 5): 100,000 attributes on one element took libxml2 26-32 s of CPU.
        let attributes = (0..<100_000).map { "a\($0)=\"1\"" }.joined(separator: " ")
        let text = "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\">\n<Period \(attributes)/></MPD>"
        let error = #expect(throws: MPDError.self) { try MPDManifest.parse(Array(text.utf8), url: Self.url) }
        #expect(error?.kind == .tooLarge, "\(String(describing: error))")
        #expect(error?.line == 2, "\(String(describing: error))")
        // Quotes are skipped: '=' inside a value is no attribute.
        let values = String(repeating: "a=b&amp;", count: 1_000)
        let quoted =
            "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\"><Location>x</Location><BaseURL q=\"\(values)\">y</BaseURL></MPD>"
        #expect(throws: Never.self) { try MPDManifest.parse(Array(quoted.utf8), url: Self.url) }
    }

    @Test("more elements than the limit are refused before parsing")
    func elementFloodIsRefused() throws {
        let text =
            "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\">" + String(repeating: "<a/>", count: 500_001) + "</MPD>"
        let error = #expect(throws: MPDError.self) { try MPDManifest.parse(Array(text.utf8), url: Self.url) }
        #expect(error?.kind == .tooLarge, "\(String(describing: error))")
    }

    @Test("a byte range ending at Int64.max is no range (its length would overflow)")
    func byteRangeAtTheTopIsDropped() throws {
        let text = """
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static"><Period><AdaptationSet>
            <Representation id="v" bandwidth="1"><BaseURL>f.mp4</BaseURL>
            <SegmentBase indexRange="0-9223372036854775807"/></Representation></AdaptationSet></Period></MPD>
            """
        let objects = try MPDManifest.parse(Array(text.utf8), url: Self.url).objects(documentURL: Self.url)
        #expect(objects.allSatisfy { $0.range == nil })
    }

    @Test(
        "template identifiers with no name before their format are kept as written (found by fuzzing: a trap)",
        arguments: ["s$%$.m4s", "s$%05d$.m4s", "$%$$Number%$", "$Number%$-$%%$", "$Time%0$"])
    func namelessIdentifiersAreKept(media: String) throws {
        let bytes = Self.mpd("<SegmentTemplate media=\"\(media)\" duration=\"1\"/>", period: "PT2S")
        let objects = try MPDManifest.parse(bytes, url: Self.url).objects(documentURL: Self.url)
        #expect(objects.count == 2)
    }

    @Test("a UTF-16 MPD is refused: the byte scans before libxml2 read UTF-8 (found by the attack session)")
    func utf16IsRefused() throws {
        let attributes = (0..<1_000).map { "a\($0)=\"1\"" }.joined(separator: " ")
        for text in [
            "<?xml version=\"1.0\" encoding=\"UTF-16\"?><!DOCTYPE MPD [<!ENTITY e \"x\">]>"
                + "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\"><BaseURL>&e;</BaseURL></MPD>",
            "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\"><Period \(attributes)/></MPD>",
        ] {
            // With a byte-order mark, as libxml2 would have read it.
            let bytes: [UInt8] = [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
            #expect(throws: MPDError.self) { try MPDManifest.parse(bytes, url: Self.url) }
            #expect(throws: MPDError.self) {
                try MPDManifest.rewrite(bytes, url: Self.url, mapping: .proxy(base: "http://127.0.0.1:1"))
            }
        }
        // An encoding declaration other than UTF-8 is read as UTF-8 all the same.
        let latin = Array(
            "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\"/>".utf8)
        #expect(throws: Never.self) { try MPDManifest.parse(latin, url: Self.url) }
    }
}
