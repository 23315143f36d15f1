import ByteRanges
import Foundation
import HLSCacheTestTraits
import HLSPlaylist
import HTTPTypes
import NIOCore
import OriginCache
import OriginClient
import SegmentCache
import Testing

@testable import HLSCacheServer

/// The answer plan, in process: how an object's head is decided from its entry and the request's `Range`, which
/// headers every answer carries, and how each failure becomes a status.
@Suite("Answer plan", .sharedMachine)
struct AnswerPlanTests {
    static let url = "https://cdn.example/v/seg1.ts"

    static func metadata(
        length: Int64? = 1000, range: RequestedRange? = nil, complete: Int64? = nil, kind: ObjectKind = .media
    ) -> EntryMetadata {
        EntryMetadata(
            key: CacheKey(origin: url, requested: range), status: 200, contentType: "video/mp2t", contentLength: length,
            etag: "\"v1\"", lastModified: "Mon, 23 Nov 2026 10:00:00 GMT", fetchedAt: Date(), completeLength: complete,
            kind: kind.rawValue)
    }

    static func record(method: String = "GET") -> AccessRecord {
        AccessRecord(method: method, path: "/o/https/cdn.example/v/seg1.ts", id: "r-1", start: .now)
    }

    static func head(_ outcome: ObjectHead.Outcome) -> ObjectHead? {
        if case .send(let head) = outcome { return head }
        return nil
    }

    @Test("a whole object is 200 with its type, validators, Accept-Ranges and a day of player caching")
    func wholeObject() throws {
        let head = try #require(Self.head(ObjectHead.make(metadata: Self.metadata(), requested: nil, result: .hit)))
        #expect(head.status == .ok)
        #expect(head.length == 1000)
        #expect(head.window == nil)
        #expect(head.headers[.contentType] == "video/mp2t")
        #expect(head.headers[.acceptRanges] == "bytes")
        #expect(head.headers[.eTag] == "\"v1\"")
        #expect(head.headers[.lastModified] == "Mon, 23 Nov 2026 10:00:00 GMT")
        #expect(head.headers[.cacheControl] == ObjectHead.cacheControl)
        #expect(head.headers[.contentRange] == nil)
    }

    @Test("a bypassed object is not cacheable by players; an unknown type is guessed from the URL's extension")
    func bypassAndType() throws {
        var metadata = Self.metadata()
        metadata.contentType = nil
        let head = try #require(Self.head(ObjectHead.make(metadata: metadata, requested: nil, result: .bypass)))
        #expect(head.headers[.cacheControl] == "no-store")
        #expect(head.headers[.contentType] == "video/mp2t")
    }

    @Test("open and suffix ranges are cut from the whole object; past the end is 416 with bytes */length")
    func rangesCutFromTheWhole() throws {
        let open = try #require(
            Self.head(
                ObjectHead.make(
                    metadata: Self.metadata(), requested: RequestedRange(header: "bytes=900-"), result: .hit)
            ))
        #expect(open.status == .partialContent)
        #expect(open.window?.offset == 900 && open.window?.length == 100)
        #expect(open.length == 100)
        #expect(open.headers[.contentRange] == "bytes 900-999/1000")
        let suffix = try #require(
            Self.head(
                ObjectHead.make(metadata: Self.metadata(), requested: RequestedRange(header: "bytes=-10"), result: .hit)
            ))
        #expect(suffix.headers[.contentRange] == "bytes 990-999/1000")
        guard
            case .unsatisfiable(let headers) = ObjectHead.make(
                metadata: Self.metadata(), requested: RequestedRange(header: "bytes=1000-"), result: .hit)
        else {
            Issue.record("a range starting at the length must be unsatisfiable")
            return
        }
        #expect(headers[.contentRange] == "bytes */1000")
    }

    @Test("a ranged key is answered as exactly its bytes, with the whole length when the origin said it")
    func rangedKey() throws {
        let range = RequestedRange.closed(first: 100, last: 149)
        let known = try #require(
            Self.head(
                ObjectHead.make(
                    metadata: Self.metadata(length: 50, range: range, complete: 5000), requested: nil, result: .miss)))
        #expect(known.status == .partialContent)
        #expect(known.window == nil)
        #expect(known.headers[.contentRange] == "bytes 100-149/5000")
        let unknown = try #require(
            Self.head(ObjectHead.make(metadata: Self.metadata(length: 50, range: range), requested: nil, result: .miss))
        )
        #expect(unknown.headers[.contentRange] == "bytes 100-149/*")
    }

    @Test("every answer carries its request id, X-Cache (not on errors), Content-Length and no-store by default")
    func finishedHeaders() {
        let answer = Answer(
            .ok, buffer: ByteBuffer(string: "hello"), contentType: "text/plain", result: .hit, record: Self.record())
        #expect(answer.headers[.xRequestID] == "r-1")
        #expect(answer.headers[.xCache] == "HIT")
        #expect(answer.headers[.contentLength] == "5")
        #expect(answer.headers[.cacheControl] == "no-store")
        let failure = Answer(failure: .badGateway, reason: "origin failed", record: Self.record())
        #expect(failure.headers[.xCache] == nil)
        #expect(failure.headers[.contentType] == "text/plain; charset=utf-8")
        #expect(failure.status == .badGateway)
        guard case .memory(let body) = failure.body else {
            Issue.record("a failure's reason is its body")
            return
        }
        #expect(String(buffer: body) == "origin failed\n")
    }

    @Test("a HEAD answer has the length of the body it does not send")
    func headHasNoBody() {
        let answer = Answer(
            .ok, buffer: ByteBuffer(string: "hello"), contentType: "text/plain", result: .miss,
            record: Self.record(method: "HEAD"))
        #expect(answer.headers[.contentLength] == "5")
        guard case .none = answer.body else {
            Issue.record("HEAD must not send a body")
            return
        }
    }

    @Test("each failure becomes one status and reason; only the origin's own failures may be served stale")
    func failureStatuses() {
        let url = Self.url
        let cases: [(any Error, Int, Bool)] = [
            (OriginError.refused(url: url, reason: "private address"), 403, false),
            (OriginError.invalidRequest(url: url, reason: "bad URL"), 400, false),
            (OriginError.tooLarge(url: url, size: 10, limit: 5), 502, false),
            (OriginError.timeout(.firstByte, limit: .seconds(5), url: url), 504, true),
            (OriginError.connectFailure(url: url, detail: "refused"), 502, true),
            (OriginError.truncatedBody(url: url, received: 1, expected: 2, detail: "reset"), 502, true),
            (InvalidPlaylistError(url: url, error: .missingHeader(line: 1)), 502, false),
            // A plan cancelled: its player left (the fill goes on); not a failure of the origin.
            (CancellationError(), 499, false),
        ]
        for (error, status, stale) in cases {
            let failure = FetchFailure(error, url: url)
            #expect(failure.status.code == status, "\(error)")
            #expect((failure.staleReason != nil) == stale, "\(error)")
            #expect(!failure.reason.isEmpty && !failure.reason.contains("\n"))
        }
        #expect(FetchFailure(originStatus: 404, url: url).status.code == 404)
        #expect(FetchFailure(originStatus: 404, url: url).reason == "origin answered 404 for \(url)")
        #expect(FetchFailure(originStatus: 404, url: url).staleReason == nil)
        #expect(FetchFailure(originStatus: 503, url: url).status.code == 502)
        #expect(FetchFailure(originStatus: 503, url: url).staleReason != nil)
        #expect(FetchFailure(originStatus: 304, url: url).status.code == 502)
        #expect(FetchFailure(originStatus: 304, url: url).staleReason == nil)
    }
}
