import Foundation
import HLSCacheTestTraits
import HTTPTypes
import RequestHeads
import SegmentCache
import Testing

@testable import HLSCacheServer

/// The CMCD reader (CTA-5004 dictionaries in RFC 8941's syntax), the `CMCD` parameter's removal from a target, and
/// the session sketch: no socket.
@Suite("CMCD parsing", .sharedMachine)
struct CMCDParserTests {
    /// hls.js's query, as CTA-5004's own example writes it.
    static let hlsJSQuery =
        "bl%3D21300%2Cbr%3D3200%2Cd%3D4004%2Cmtp%3D25400%2Cnor%3D%22..%2F300kbps%2Fseg35.m4v%22%2Cot%3Dv%2Csid%3D%226e2fb550-c457-11e9-bb97-0800200c9a66%22%2Ctb%3D6000"

    @Test("hls.js's query decodes to its keys: integers, strings and a token")
    func queryMode() throws {
        let cmcd = try CMCD(query: Substring(Self.hlsJSQuery))
        #expect(cmcd.integer("bl") == 21300)
        #expect(cmcd.integer("br") == 3200)
        #expect(cmcd.integer("d") == 4004)
        #expect(cmcd.integer("mtp") == 25400)
        #expect(cmcd.string("nor") == "../300kbps/seg35.m4v")
        #expect(cmcd.token("ot") == "v")
        #expect(cmcd.string("sid") == "6e2fb550-c457-11e9-bb97-0800200c9a66")
        #expect(cmcd.integer("tb") == 6000)
        #expect(cmcd.members.count == 8)
    }

    @Test("header mode: the four headers are one dictionary; booleans, decimals, inner lists and parameters read")
    func headerMode() throws {
        let cmcd = try CMCD(
            headers: "bl=21300, bs, mtp=25400, nor=(\"a.ts\" \"b.ts\");x=1, ot=av, d=-1.5, su=?0, sid=\"x\\\"y\", st=l")
        #expect(cmcd.integer("bl") == 21300)
        #expect(cmcd.flag("bs"))
        #expect(!cmcd.flag("su"))
        #expect(cmcd["su"] == .boolean(false))
        #expect(cmcd["nor"] == .list([.string("a.ts"), .string("b.ts")]))
        #expect(cmcd["d"] == .decimal(-1.5))
        #expect(cmcd.string("sid") == "x\"y")
        #expect(cmcd.token("st") == "l")
        #expect(cmcd.token("ot") == "av")
    }

    @Test("strings: escapes of quotes and backslashes taken out, an empty one, long ones as written")
    func strings() throws {
        let long = String(repeating: "0123456789", count: 30)
        let cmcd = try CMCD(
            headers: #"cid="a\\b\"c\\", sid="", nor="\#(long)", v=1"#)
        #expect(cmcd.string("cid") == #"a\b"c\"#)
        #expect(cmcd.string("sid") == "")
        #expect(cmcd.string("nor") == long)
        #expect(cmcd.integer("v") == 1)
    }

    @Test(
        "what is not a CMCD dictionary within the limits is invalid, never a trap",
        arguments: [
            ("bl=1,bl=2", CMCD.Invalid.duplicateKey("bl")),
            ("bl=1,", .syntax(at: 5)),
            ("Bl=1", .syntax(at: 0)),
            ("sid=\"open", .syntax(at: 9)),
            ("bl=1234567890123456", .syntax(at: 18)),
            ("d=1.2345", .syntax(at: 7)),
            ("bs=?2", .syntax(at: 4)),
            ("nor=(\"a\"", .syntax(at: 8)),
            ("sid=\"\u{1}\"", .syntax(at: 5)),
        ])
    func invalidFields(field: String, expected: CMCD.Invalid) {
        #expect(throws: expected) { try CMCD(headers: field) }
    }

    @Test("past the limits: a field over 4 KiB, over 64 keys, a malformed percent escape")
    func limits() {
        #expect(throws: CMCD.Invalid.tooLong) {
            try CMCD(headers: "sid=\"" + String(repeating: "a", count: 4100) + "\"")
        }
        let keys = (0..<65).map { "k\($0)" }.joined(separator: ",")
        #expect(throws: CMCD.Invalid.tooManyKeys) { try CMCD(headers: keys) }
        #expect(throws: CMCD.Invalid.syntax(at: 0)) { try CMCD(query: "bl%3") }
        #expect(throws: CMCD.Invalid.syntax(at: 0)) { try CMCD(query: "bl%G1") }
        // 64 keys are read.
        let sixtyFour = (0..<64).map { "k\($0)" }.joined(separator: ",")
        #expect((try? CMCD(headers: sixtyFour))?.members.count == 64)
    }

    @Test(
        "the CMCD parameter is taken out of a target, wherever it is, and nothing else",
        arguments: [
            ("/o/http/h/a.ts?CMCD=bl%3D1", "/o/http/h/a.ts", "bl%3D1"),
            ("/o/http/h/a.ts?t=1&CMCD=bl%3D1&u=2", "/o/http/h/a.ts?t=1&u=2", "bl%3D1"),
            ("/o/http/h/a.ts?t=1&CMCD=bl%3D1", "/o/http/h/a.ts?t=1", "bl%3D1"),
            ("/a.ts?CMCD", "/a.ts", ""),
            ("/a.ts?CMCD=x&CMCD=y", "/a.ts", "y"),
            ("/a.ts?xCMCD=1&CMCDx=2", "/a.ts?xCMCD=1&CMCDx=2", nil),
            ("/a.ts?cmcd=1", "/a.ts?cmcd=1", nil),
            ("/CMCD/a.ts", "/CMCD/a.ts", nil),
            ("/a.ts?CMCMCD=1", "/a.ts?CMCMCD=1", nil),
            // Nothing but empty parameters left: no query, as without CMCD.
            ("/a.ts?CMCD=x&", "/a.ts", "x"),
            ("/a.ts?&CMCD=x", "/a.ts", "x"),
            ("/a.ts?a=1&&CMCD=x", "/a.ts?a=1&", "x"),
        ] as [(String, String, String?)])
    func querySplit(target: String, kept: String, value: String?) {
        let split = CMCDQuery.split(target)
        #expect(split.target == kept)
        #expect(split.value.map(String.init) == value)
    }

    @Test("the session sketch counts distinct ids of the last minute within a few per cent, in fixed memory")
    func sessionSketch() {
        let start = ContinuousClock.now
        let sketch = SessionSketch(now: start)
        for round in 0..<3 {
            for session in 0..<1000 { sketch.note("session-\(session)", at: start + .seconds(round)) }
        }
        let estimate = sketch.estimate(at: start + .seconds(5))
        #expect(abs(estimate - 1000) <= 30, "\(estimate)")
        // Still counted 40 s later (the previous window), gone after two windows.
        #expect(abs(sketch.estimate(at: start + .seconds(40)) - 1000) <= 30)
        #expect(sketch.estimate(at: start + .seconds(95)) == 0)
        sketch.note("late", at: start + .seconds(96))
        #expect(sketch.estimate(at: start + .seconds(96)) == 1)
    }

    @Test(
        "--cmcd-to-origin passes on a valid report as sent: the query only of URL-safe bytes, the fields as they came")
    func passedOnAsSent() {
        let query = RequestResolution.ProxiedObject.additions(of: CMCDReport(query: "bl%3D2000%2Csid%3D%22a%22"))
        #expect(query?.queryParameter == "CMCD=bl%3D2000%2Csid%3D%22a%22" && query?.fields.isEmpty == true)
        #expect(query?.url("http://o/a.ts?t=1") == "http://o/a.ts?t=1&CMCD=bl%3D2000%2Csid%3D%22a%22")
        #expect(query?.url("http://o/a.ts") == "http://o/a.ts?CMCD=bl%3D2000%2Csid%3D%22a%22")
        // Valid CMCD, but bytes a URL does not carry as they are (a raw quote): not passed on.
        #expect(RequestResolution.ProxiedObject.additions(of: CMCDReport(query: "sid=\"a\"")) == nil)
        // A `;`, a parameter separator to some origins (valid CMCD: a parameter of `bl`): not passed on.
        #expect(RequestResolution.ProxiedObject.additions(of: CMCDReport(query: "bl=2000;evil=1")) == nil)
        // Invalid CMCD: not passed on.
        #expect(RequestResolution.ProxiedObject.additions(of: CMCDReport(query: "bl%3D1%2Cbl%3D2")) == nil)
        let fields = [HTTPField(name: .cmcdRequest, value: "bl=1"), HTTPField(name: .cmcdSession, value: "sid=\"s\"")]
        let headers = RequestResolution.ProxiedObject.additions(
            of: CMCDReport(headers: "bl=1, sid=\"s\"", fields: fields))
        #expect(headers?.queryParameter == nil)
        #expect(headers?.fields.map { "\($0.name): \($0.value)" } == ["CMCD-Request: bl=1", "CMCD-Session: sid=\"s\""])
    }

    @Test("keys of any length are found and duplicates refused, whether they are read by number (up to 8 bytes) or not")
    func keysByNumberAndByName() throws {
        let cmcd = try CMCD(headers: "bl=1,com.example-long-key=2,ab=\"x\",su")
        #expect(cmcd.integer("bl") == 1 && cmcd["com.example-long-key"] == .integer(2))
        #expect(cmcd.value("com.example-long-key") == .integer(2) && cmcd.string("ab") == "x" && cmcd.flag("su"))
        #expect(cmcd.integer("b") == nil && cmcd.value("abc") == nil)
        #expect(throws: CMCD.Invalid.duplicateKey("com.example-long-key")) {
            try CMCD(headers: "com.example-long-key=1,com.example-long-key=2")
        }
        #expect(throws: CMCD.Invalid.duplicateKey("bl")) { try CMCD(headers: "bl=1,br=2,bl=3") }
        #expect(CMCDPrefetch.Result.allCases.map(\.index) == Array(0..<CMCDPrefetch.Result.allCases.count))
    }
}
