import ByteRanges
import Foundation
import HLSCacheTestTraits
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import SegmentCache
import Testing

@testable import HLSCacheServer

/// The writers of an answer's head agree: the bytes ``Answer/writeHead(closing:into:)`` writes for a request the
/// decoder never saw are the bytes NIO's encoder writes for the answer's fields and for the fields of
/// ``Answer/headers`` (what the responder sends), for every kind of answer, its own fields made once or listed, with
/// each CORS grant.
@Suite("Answer head bytes", .sharedMachine)
struct AnswerHeadBytesTests {
    /// What NIO's HTTP/1 encoder writes for the answer's head, built from its fields in order and the connection's
    /// own, without its `Date` line.
    static func encoded(_ answer: Answer, closing: Bool) throws -> String {
        var fields: [(String, String)] = []
        answer.forEachField { name, value in fields.append((name, value)) }
        ServerFields.forEach { name, value in fields.append((name, value)) }
        if closing { fields.append(("Connection", "close")) }
        return try encoded(
            HTTPResponseHead(
                version: .http1_1,
                status: HTTPResponseStatus(statusCode: answer.status.code, reasonPhrase: answer.status.reasonPhrase),
                headers: HTTPHeaders(fields)))
    }

    /// The head Hummingbird's answer would have: ``Answer/headers`` (what the responder sends), then the
    /// connection's fields.
    static func reference(_ answer: Answer, closing: Bool) -> HTTPResponseHead {
        var fields = answer.headers.map { ($0.name.rawName, $0.value) }
        fields.append(("Date", "-"))
        fields.append(("Server", Answer.serverName))
        if closing { fields.append(("Connection", "close")) }
        return HTTPResponseHead(
            version: .http1_1,
            status: HTTPResponseStatus(statusCode: answer.status.code, reasonPhrase: answer.status.reasonPhrase),
            headers: HTTPHeaders(fields))
    }

    /// What NIO's HTTP/1 encoder writes for `head`, without its `Date` line.
    static func encoded(_ head: HTTPResponseHead) throws -> String {
        let channel = EmbeddedChannel(handler: HTTPResponseEncoder())
        try channel.writeOutbound(HTTPServerResponsePart.head(head))
        var bytes = ByteBuffer()
        while var part = try channel.readOutbound(as: ByteBuffer.self) { bytes.writeBuffer(&part) }
        _ = try channel.finish()
        return withoutDate(String(buffer: bytes))
    }

    /// What `writeHead` writes, without its `Date` line.
    static func written(_ answer: Answer, closing: Bool) -> String {
        var bytes = ByteBuffer()
        answer.writeHead(closing: closing, into: &bytes)
        return withoutDate(String(buffer: bytes))
    }

    static func withoutDate(_ head: String) -> String {
        head.split(separator: "\r\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("Date: ") }
            .joined(separator: "\r\n")
    }

    static let grants: [(String, CORSPolicy.Grant)] = [
        ("none", .none),
        ("any origin", CORSPolicy.Grant(allowOrigin: "*")),
        ("a listed origin", CORSPolicy.Grant(allowOrigin: "https://player.test", variesByOrigin: true)),
        ("an origin not listed", CORSPolicy.Grant(allowOrigin: nil, variesByOrigin: true)),
    ]

    static func record(method: String = "GET", cors: CORSPolicy.Grant) -> AccessRecord {
        AccessRecord(method: method, path: "/o/https/cdn.example/v/seg1.ts", id: "r-7", start: .now, cors: cors)
    }

    static func metadata(url: String = AnswerPlanTests.url, expiry: Date? = nil) -> EntryMetadata {
        var metadata = AnswerPlanTests.metadata()
        metadata.key = CacheKey(url: url)
        metadata.expiry = expiry
        return metadata
    }

    /// Answers of every kind, for a request with `method` and `cors`.
    static func answers(method: String, cors: CORSPolicy.Grant) throws -> [(String, Answer)] {
        let record = record(method: method, cors: cors)
        let components = try RequestResolutionTests.components()
        var answers: [(String, Answer)] = []
        for (name, requested) in [("whole", nil), ("range", RequestedRange(header: "bytes=10-19"))] {
            guard case .send(let head) = ObjectHead.make(metadata: metadata(), requested: requested, result: .hit)
            else { throw AnswerHeadBytesError.noHead }
            answers.append(
                (
                    "object, \(name)",
                    Answer(
                        head.status, headers: head.headers, body: .none, length: head.length, result: .hit,
                        record: record)
                ))
        }
        guard
            case .unsatisfiable(var unsatisfiable) = ObjectHead.make(
                metadata: metadata(), requested: RequestedRange(header: "bytes=5000-"), result: .hit)
        else { throw AnswerHeadBytesError.noHead }
        unsatisfiable[.contentType] = "text/plain"
        answers.append(
            (
                "416",
                Answer(
                    .rangeNotSatisfiable, headers: unsatisfiable, body: .none, length: 0, result: .hit, record: record)
            ))
        answers.append(("failure", Answer(failure: .badGateway, reason: "origin failed", record: record)))
        answers.append(("preflight", Answer(preflightAsking: "range", record: record)))
        var parent = Answer(
            .ok, buffer: ByteBuffer(string: "x"), contentType: "text/plain", result: .miss, record: record)
        parent.setField(.xCacheParent, to: "HIT")
        answers.append(("a field set after planning", parent))
        let live = RenderedPlaylistsTests.rendering()
        let playlist = metadata(url: "https://cdn.example/live.m3u8", expiry: Date() + 10)
        for result in [CacheResult.hit, .miss, .stale] {
            let answer = try #require(
                Answer.playlist(live, metadata: playlist, result: result, record: record, components: components))
            answers.append(("live playlist, \(result.header)", answer))
        }
        return answers
    }

    @Test("writeHead writes the encoder's bytes for every answer, method, CORS grant and connection end")
    func writeHeadMatchesTheEncoder() throws {
        for method in ["GET", "HEAD"] {
            for (grantName, grant) in Self.grants {
                for (name, answer) in try Self.answers(method: method, cors: grant) {
                    for closing in [false, true] {
                        let written = Self.written(answer, closing: closing)
                        let context = "\(name), \(method), CORS \(grantName), closing \(closing)"
                        #expect(written == (try Self.encoded(answer, closing: closing)), "\(context)")
                        #expect(
                            written == (try Self.encoded(Self.reference(answer, closing: closing))),
                            "not the fields of `headers`: \(context)")
                        #expect(written.hasSuffix("\r\n\r\n"))
                    }
                }
            }
        }
    }

    @Test(
        "a length's digits are written as String spells them",
        arguments: [0, 7, 10, 1176, 99_999, Int64.max, -1, Int64.min])
    func decimalDigits(value: Int64) {
        var bytes = ByteBuffer(string: "Content-Length: ")
        bytes.writeDecimal(value)
        #expect(String(buffer: bytes) == "Content-Length: \(value)")
    }

    @Test("a fresh live playlist's fields are made once, and are the fields its stale answer lists, but Age")
    func liveFieldsMadeOnceAreTheListedOnes() throws {
        let components = try RequestResolutionTests.components()
        let live = RenderedPlaylistsTests.rendering()
        let playlist = Self.metadata(url: "https://cdn.example/live.m3u8", expiry: Date() + 10)
        let record = Self.record(cors: .none)
        let fresh = try #require(
            Answer.playlist(live, metadata: playlist, result: .hit, record: record, components: components))
        let again = try #require(
            Answer.playlist(live, metadata: playlist, result: .hit, record: record, components: components))
        guard case .made(let made) = fresh.ownFields, case .made(let madeAgain) = again.ownFields else {
            Issue.record("a fresh live playlist's fields were not made once")
            return
        }
        #expect(made === madeAgain, "made again for the same rendering")
        let stale = try #require(
            Answer.playlist(live, metadata: playlist, result: .stale, record: record, components: components))
        guard case .list(var listed) = stale.ownFields else {
            Issue.record("a stale answer's Age changes: its fields are a list")
            return
        }
        listed[.age] = nil
        #expect(Array(listed) == Array(made.fields))
        #expect(made.fields[.lastModified] == playlist.lastModified)
    }
}

enum AnswerHeadBytesError: Error {
    case noHead
}
