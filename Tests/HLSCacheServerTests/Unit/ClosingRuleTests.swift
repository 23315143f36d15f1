import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import HLSCacheServer

/// When a connection closes after an answer: one rule, the HTTP/1 parser's (llhttp's), for every reader of a head.
@Suite("Closing rule")
struct ClosingRuleTests {
    private static func tokens(_ values: [String]) -> ClosingRule.Tokens { ClosingRule.Tokens(fieldValues: values) }

    @Test("HTTP/1.1 keeps the connection unless it says close; 1.0 and the odd versions close unless keep-alive")
    func versionsAndTokens() {
        #expect(!ClosingRule.closes(major: 1, minor: 1, tokens: Self.tokens([])))
        #expect(ClosingRule.closes(major: 1, minor: 1, tokens: Self.tokens(["keep-alive, Close"])))
        #expect(ClosingRule.closes(major: 1, minor: 1, tokens: Self.tokens([" foo ,close "])))
        #expect(ClosingRule.closes(major: 1, minor: 0, tokens: Self.tokens([])))
        #expect(!ClosingRule.closes(major: 1, minor: 0, tokens: Self.tokens(["Keep-Alive"])))
        #expect(ClosingRule.closes(major: 2, minor: 0, tokens: Self.tokens([])), "llhttp takes 2.0 for 1.0")
        #expect(ClosingRule.closes(major: 0, minor: 9, tokens: Self.tokens([])))
        #expect(ClosingRule.closes(major: 1, minor: 1, tokens: Self.tokens([]), isConnect: true))
        #expect(ClosingRule.closes(major: 1, minor: 1, tokens: Self.tokens([]), upgrades: true))
    }

    @Test("the decoder's heads: Proxy-Connection counts as Connection, as llhttp reads it")
    func decodedHeads() throws {
        for (version, fields, closes) in [
            (HTTPVersion.http1_1, [("Proxy-Connection", "close")], true),
            (.http1_0, [("Proxy-Connection", "Keep-Alive")], false),
            (.http1_1, [("Connection", "close")], true),
            (.http1_1, [], false),
            (HTTPVersion(major: 2, minor: 0), [], true),
        ] {
            var head = HTTPRequestHead(version: version, method: .GET, uri: "/o/https/cdn.test/a.ts")
            head.headers.add(name: "Host", value: "edge")
            for (name, value) in fields { head.headers.add(name: name, value: value) }
            if version == .http1_1 {
                #expect(ExchangeRequest(head)?.closes == closes, "\(version) \(fields)")
            }
            let channel = EmbeddedChannel(handler: CloseNormalizer())
            try channel.writeInbound(HTTPServerRequestPart.head(head))
            guard case .head(let passed) = try channel.readInbound(as: HTTPServerRequestPart.self) else {
                Issue.record("no head passed on")
                continue
            }
            #expect((passed.headers["connection"].first == "close") == closes, "\(version) \(fields)")
            _ = try channel.finish()
        }
    }
}
