import HLSCacheTestTraits
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import RequestHeads
import Testing

@testable import HLSCacheServer

/// When a connection closes after an answer: one rule, the HTTP/1 parser's (llhttp's), for every reader of a head.
@Suite("Closing rule", .sharedMachine)
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
            guard case .request(let request) = DecodedHead(head) else {
                Issue.record("\(version) \(fields) refused")
                continue
            }
            #expect(request.closes == closes, "\(version) \(fields)")
            #expect(request.isHTTP10 == (version == .http1_0), "\(version)")
        }
    }

    @Test("the decoder's heads refused: CONNECT, no Host in HTTP/1.1, two Hosts; an upgrade closes")
    func decodedRefusals() {
        func head(
            _ version: HTTPVersion, _ method: HTTPMethod = .GET, hosts: Int, _ extra: [(String, String)] = []
        )
            -> HTTPRequestHead
        {
            var head = HTTPRequestHead(version: version, method: method, uri: "/healthz")
            for index in 0..<hosts { head.headers.add(name: "Host", value: "edge\(index)") }
            for (name, value) in extra { head.headers.add(name: name, value: value) }
            return head
        }
        guard case .refused(.methodNotAllowed, _) = DecodedHead(head(.http1_1, .CONNECT, hosts: 1)) else {
            Issue.record("CONNECT not refused")
            return
        }
        guard case .refused(.badRequest, _) = DecodedHead(head(.http1_1, hosts: 0)),
            case .refused(.badRequest, _) = DecodedHead(head(.http1_1, hosts: 2)),
            case .refused(.badRequest, _) = DecodedHead(head(.http1_0, hosts: 2))
        else {
            Issue.record("a wrong number of Host fields not refused")
            return
        }
        guard case .request(let old) = DecodedHead(head(.http1_0, hosts: 0)),
            case .request(let upgrade) = DecodedHead(head(.http1_1, hosts: 1, [("Upgrade", "h2c")])),
            case .request(let purge) = DecodedHead(
                head(.http1_1, HTTPMethod(rawValue: "PURGE"), hosts: 1, [("Authorization", "Bearer t")]))
        else {
            Issue.record("an ordinary head refused")
            return
        }
        #expect(old.isHTTP10 && old.closes, "HTTP/1.0 needs no Host")
        #expect(upgrade.closes, "an upgrade closes: the parser reads nothing after it")
        #expect(purge.method.rawValue == "PURGE" && purge.authorization == "Bearer t")
    }
}
