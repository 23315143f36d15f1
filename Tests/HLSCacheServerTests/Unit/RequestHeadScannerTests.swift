import HLSCacheTestTraits
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import RequestHeads
import Testing

@testable import HLSCacheServer

/// ``RequestHeadScanner`` reads the requests the hit path answers from the connection's bytes, and hands everything
/// else to the HTTP/1 decoder: it must never read a head another way than the decoder would.
@Suite("Request head scanner", .sharedMachine)
struct RequestHeadScannerTests {
    private static func scan(_ text: String) -> RequestHeadScanner.Scan {
        RequestHeadScanner.scan(ByteBuffer(string: text))
    }

    private static let head =
        "GET /o/https/cdn.test/live/index.m3u8?_HLS_msn=5 HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: bytes=0-99\r\n"
        + "Via: 1.1 a\r\nvia:1.1 b \r\nOrigin: https://player.test\r\nConnection: keep-alive, Close\r\n"
        + "X-HLSCache-Read-Ahead: 1\r\nAccess-Control-Request-Headers: range\r\nAccept: */*\r\n\r\n"

    @Test("a GET head is read whole: its length, target and the fields the hit path decides on")
    func readsTheFieldsTheHitPathUses() throws {
        guard case .request(let request, let length) = Self.scan(Self.head + "GET /next HTTP/1.1\r\n") else {
            Issue.record("not read")
            return
        }
        #expect(length == Self.head.utf8.count)
        #expect(request.method == .get)
        #expect(request.target == "/o/https/cdn.test/live/index.m3u8?_HLS_msn=5")
        #expect(request.range == "bytes=0-99")
        #expect(request.via == "1.1 a, 1.1 b ")  // trailing spaces kept, as the decoder keeps them
        #expect(request.origin == "https://player.test")
        #expect(request.accessControlRequestHeaders == "range")
        #expect(request.readAhead == "1")
        #expect(request.closes)
    }

    @Test("HEAD and OPTIONS are read; a keep-alive request does not close")
    func readsHeadAndOptions() {
        for (method, expected) in [("HEAD", HTTPRequest.Method.head), ("OPTIONS", .options)] {
            guard case .request(let request, _) = Self.scan("\(method) /a HTTP/1.1\r\nHost: h\r\n\r\n") else {
                Issue.record("\(method) not read")
                continue
            }
            #expect(request.method == expected)
            #expect(!request.closes)
        }
    }

    @Test("every prefix of a head is incomplete, never misread")
    func everyPrefixIsIncomplete() {
        let bytes = Array(Self.head.utf8)
        for count in 0..<bytes.count {
            let scan = RequestHeadScanner.scan(ByteBuffer(bytes: bytes[..<count]))
            guard case .incomplete = scan else {
                Issue.record("prefix of \(count) bytes: \(scan)")
                return
            }
        }
    }

    @Test(
        "anything unusual is the decoder's to read",
        arguments: [
            "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n",
            "GET /a HTTP/1.0\r\nHost: h\r\n\r\n",
            "GET http://h/a HTTP/1.1\r\nHost: h\r\n\r\n",
            "GET * HTTP/1.1\r\n\r\n",
            "GET /a HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
            "GET /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "GET /a HTTP/1.1\r\nExpect: 100-continue\r\n\r\n",
            "GET /a HTTP/1.1\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\n\r\n",
            "GET /a HTTP/1.1\r\nConnection: upgrade\r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: h\r\nHost: i\r\n\r\n",
            "GET /a HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n",
            "GET /a HTTP/1.1\nHost: h\n\n",
            "GET /a HTTP/1.1\r\nHost: h\n\r\n",
            "GET /a HTTP/1.1\r\nHost : h\r\n\r\n",
            "GET /a HTTP/1.1\r\n: h\r\n\r\n",
            "GET /a HTTP/1.1\r\nX-A: a\u{0}b\r\n\r\n",
            "GET /a HTTP/1.1\r\nX-A: a\rb\r\n\r\n",
            "GET /a\u{1}b HTTP/1.1\r\n\r\n",
            "GET  /a HTTP/1.1\r\n\r\n",
            "get /a HTTP/1.1\r\n\r\n",
            "\r\nGET /a HTTP/1.1\r\n\r\n",
        ])
    func unusualHeadsAreHandedOn(_ text: String) {
        guard case .other = Self.scan(text) else {
            Issue.record("read here: \(text.debugDescription)")
            return
        }
    }

    @Test("a head longer than the scanner reads is handed on, complete or not")
    func overlongHeadsAreHandedOn() {
        let field = "X-Long: " + String(repeating: "a", count: RequestHeadScanner.maxHeadLength) + "\r\n"
        guard case .other = Self.scan("GET /a HTTP/1.1\r\n" + field) else {
            Issue.record("an incomplete overlong head was kept")
            return
        }
        guard case .other = Self.scan("GET /a HTTP/1.1\r\n" + field + "\r\n") else {
            Issue.record("a complete overlong head was read")
            return
        }
    }
}

/// The scanner against the HTTP/1 decoder behind it, on heads made by mutating valid ones: whatever the scanner
/// reads must be exactly one bodyless request to the decoder, of the same length, read into the same ``ExchangeRequest``.
@Suite("Request head scanner against the decoder", .sharedMachine)
struct RequestHeadScannerAgreementTests {
    private static let seeds = [
        "GET /o/https/cdn.test/a.ts HTTP/1.1\r\nHost: h\r\n\r\n",
        "HEAD /a?b=c HTTP/1.1\r\nHost: h\r\nRange: bytes=1-2\r\nConnection: close\r\n\r\n",
        "OPTIONS /x HTTP/1.1\r\nHost: h\r\nOrigin: https://p.test\r\nAccess-Control-Request-Headers: range\r\n\r\n",
        "GET /v HTTP/1.1\r\nHost: h\r\nVia: 1.1 a\r\nVia: 1.1 b\r\nX-HLSCache-Read-Ahead: 1\r\nConnection: keep-alive\r\n\r\n",
        "GET /c HTTP/1.1\r\nHost: h\r\nConnection: close, x\r\nProxy-Connection: keep-alive\r\n\r\n",
        "GET /l.m3u8?_HLS_msn=3&_HLS_part=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: x/1 \t\r\n\r\n",
    ]
    private static let alphabet = Array(" \t\r\n:,;=/?%\0\u{7F}aZ09-_".utf8) + [0x80, 0xFF, 0x01]

    /// A deterministic generator, so that a failure is reproduced by running the test again.
    private struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    private static func mutated(_ seed: [UInt8], using generator: inout SplitMix) -> [UInt8] {
        var bytes = seed
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            let byte = alphabet.randomElement(using: &generator) ?? 0
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: bytes[index] = byte
            case 1: bytes.insert(byte, at: index)
            case 2: if bytes.count > 1 { bytes.remove(at: index) }
            default:
                let end = min(bytes.count, index + Int.random(in: 1...12, using: &generator))
                bytes.insert(contentsOf: bytes[index..<end], at: index)
            }
        }
        return bytes
    }

    /// What the decoder reads from `bytes`: the parts, and whether it failed.
    private static func decode(_ bytes: [UInt8]) -> (parts: [HTTPServerRequestPart], failed: Bool) {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
        var failed = false
        do { try channel.writeInbound(ByteBuffer(bytes: bytes)) } catch { failed = true }
        var parts: [HTTPServerRequestPart] = []
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
        _ = try? channel.finish()
        return (parts, failed)
    }

    @Test("every head the scanner reads, the decoder reads as the same bodyless request")
    func scannerAgreesWithTheDecoder() async {
        var generator = SplitMix(state: 18)
        var read = 0
        for round in 0..<20_000 {
            // Seconds of work in a debug build: the other suites' in-process origins run in between.
            if round % 500 == 0 { await Task.yield() }
            let seed = Array(Self.seeds[round % Self.seeds.count].utf8)
            let bytes = round < Self.seeds.count ? seed : Self.mutated(seed, using: &generator)
            guard case .request(let request, let length) = RequestHeadScanner.scan(ByteBuffer(bytes: bytes)) else {
                continue
            }
            read += 1
            let (parts, failed) = Self.decode(Array(bytes[..<length]))
            let text = String(decoding: bytes, as: UTF8.self).debugDescription
            guard !failed, parts.count == 2, case .head(let head) = parts[0], case .end(nil) = parts[1] else {
                Issue.record("the decoder did not read one bodyless request from \(text): \(parts), failed: \(failed)")
                return
            }
            #expect(ExchangeRequest(head) == request, "\(text)")
        }
        // The mutations must leave many heads readable, or the test proves little.
        #expect(read > 4_000)
    }
}

/// Heads the decoder reads its own way, found by review: they must go to it.
@Suite("Request head scanner: the decoder's own readings", .sharedMachine)
struct RequestHeadScannerDecoderReadingsTests {
    @Test(
        "Proxy-Connection, a tab in Connection and too many fields are the decoder's to read",
        arguments: [
            "GET /a HTTP/1.1\r\nProxy-Connection: close\r\n\r\n",
            "GET /a HTTP/1.1\r\nConnection: close\t\r\n\r\n",
            "GET /a HTTP/1.1\r\nConnection: keep-alive,\tclose\r\n\r\n",
            "GET /a HTTP/1.1\r\n" + String(repeating: "X-A: 1\r\n", count: RequestHeadScanner.maxFieldCount + 1)
                + "\r\n",
        ])
    func handedOn(_ text: String) {
        guard case .other = RequestHeadScanner.scan(ByteBuffer(string: text)) else {
            Issue.record("read here: \(text.prefix(80).debugDescription)")
            return
        }
    }

    @Test("as many fields as the scanner reads are read")
    func fieldsUpToTheLimitAreRead() {
        let text =
            "GET /a HTTP/1.1\r\nHost: h\r\n"
            + String(repeating: "X-A: 1\r\n", count: RequestHeadScanner.maxFieldCount - 1)
            + "\r\n"
        guard case .request = RequestHeadScanner.scan(ByteBuffer(string: text)) else {
            Issue.record("not read")
            return
        }
    }
}
