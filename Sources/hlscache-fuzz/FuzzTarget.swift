import ByteRanges
import DASHManifest
import Foundation
import FuzzDriver
import HLSPlaylist
import ManifestURLs
import NIOCore
import NIOEmbedded
import NIOHTTP1
import OriginCache
import RequestHeads
import SegmentCache

/// The fuzzing harnesses: each feeds one input to a parser that takes hostile bytes and exercises what is computed
/// from the result, so that a trap anywhere on the way is a crash libFuzzer reports.
enum FuzzTarget: String, FuzzHarness {
    /// The HLS parser, the number checks, the rewriter (with its limits), the segment walk and the reference walk.
    case playlist
    /// The `Range` and `Content-Range` parsers and the key and window computed from them.
    case range
    /// The forward-mode request-target decoder and proxy URL encoder.
    case target
    /// The MPD parser (libxml2 and the model reader) and the MPD rewriter.
    case mpd
    /// The front's request head scanner, against the HTTP/1 decoder (a head it reads that the decoder reads
    /// otherwise is a crash); what the scanner does not read, through the decoder into ``DecodedHead``; the same
    /// bytes as an HTTP/2 header block into ``DecodedHead`` (a malformed block read as a request is a crash). The rest of
    /// the request path, up to the answer's plan, is `hlscache-fuzz-exchange`'s harness.
    case request
    /// The CMCD parser (CTA-5004's dictionaries, query and header modes) and the `CMCD` parameter's split from a
    /// target, as a request's head is read: a target whose split keeps a `CMCD` parameter is a crash.
    case cmcd
    /// Manifest views, as the server takes them: the first line is a query whose `hlscache.*` parameters are split
    /// from a target (a kept one is a crash) and read (a view whose canonical spelling reads otherwise is a crash);
    /// the rest, a playlist (or an MPD) shown through the view, recorded in a live timeline and written again from
    /// it (delay, start-over).
    case view

    /// Runs the harness on one input.
    func run(_ input: UnsafeBufferPointer<UInt8>) {
        switch self {
        case .playlist: Self.playlist(Array(input))
        case .range: Self.range(String(decoding: input, as: UTF8.self))
        case .target: Self.target(String(decoding: input, as: UTF8.self))
        case .mpd: Self.mpd(Array(input))
        case .request: Self.request(Array(input))
        case .cmcd: Self.cmcd(String(decoding: input, as: UTF8.self))
        case .view: Self.view(Array(input))
        }
    }

    /// As the server takes an MPD: parsed and rewritten (the render; the fill's parse is the same reader), and every
    /// Representation's segments listed for the read-ahead index (the expansion, counted and checked as the server's
    /// is, listing at most a few dozen so that the run goes to the next input), each made a cache key.
    private static func mpd(_ bytes: [UInt8]) {
        let url = "https://origin.example/dash/manifest.mpd?token=abc"
        _ = MPDManifest.looksLikeMPD(bytes)
        guard let rewritten = try? MPDManifest.rewrite(bytes, url: url, mapping: .proxy(base: "http://127.0.0.1:8080"))
        else { return }
        let limits = ExpansionLimits(maxSegments: 64, maxURLBytes: 64 << 10)
        guard let representations = try? rewritten.mpd.objectsByRepresentation(documentURL: url, limits: limits) else {
            return
        }
        for (_, objects) in representations {
            for object in objects {
                // As the renderer's index makes them.
                let range = object.range.flatMap {
                    ByteRange(offset: $0.lowerBound, length: $0.upperBound - $0.lowerBound + 1)
                }
                _ = keys.key(for: object.url, range: range)
            }
        }
    }

    /// As the server takes a playlist: parsed at the fill, rewritten at the render (with its limits), its segments
    /// walked and made cache keys for the read-ahead index (the expansion), its references walked.
    private static func playlist(_ bytes: [UInt8]) {
        guard let playlist = try? Playlist(parsing: bytes) else { return }
        let url = "https://origin.example/live/stream/index.m3u8?token=abc"
        _ = try? playlist.rewritten(playlistURL: url, mapping: .proxy(base: "http://127.0.0.1:8080"))
        _ = try? playlist.withRewritten(playlistURL: url, mapping: .proxy(base: "http://127.0.0.1:8080")) { $0.count }
        for target in playlist.segmentTargets(playlistURL: url, limit: 10_000) {
            _ = keys.key(for: target.url, range: target.byteRange.flatMap { $0.length > 0 ? $0 : nil })
        }
        _ = playlist.references(playlistURL: url)
        _ = playlist.targetDuration
        _ = playlist.partTarget
        _ = playlist.serverControl
        _ = playlist.variantStreams
    }

    private static func range(_ header: String) {
        if let requested = RequestedRange(header: header) {
            for length: Int64 in [0, 1, 100, 1 << 40, .max] { _ = requested.resolved(length: length) }
            let key = CacheKey(origin: "https://origin.example/a.ts", requested: requested)
            if let range = key.range { _ = range.upperBound }
        }
        if let contentRange = ContentRange(header: header) {
            _ = contentRange.length
            _ = ByteRange(offset: contentRange.first, length: contentRange.length)
        }
    }

    private static func request(_ bytes: [UInt8]) {
        http2Head(bytes)
        guard case .request(let request, let length) = RequestHeadScanner.scan(ByteBuffer(bytes: bytes)) else {
            decodedRequests(bytes)
            return
        }
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
        let decoded = Result { try channel.writeInbound(ByteBuffer(bytes: bytes[..<length])) }
        var parts: [HTTPServerRequestPart] = []
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
        _ = try? channel.finish()
        guard case .success = decoded, parts.count == 2, case .head(let head) = parts[0], case .end(nil) = parts[1],
            ExchangeRequest(head) == request
        else {
            fatalError("the scanner read \(request) from a head the decoder reads as \(parts) (\(decoded))")
        }
    }

    /// The same bytes as an HTTP/2 stream's header block, as HPACK would hand it over: a field a line, its name up to
    /// the first colon after the line's first byte (a pseudo-header's name starts with one). A block read as a
    /// request must have passed RFC 9113's checks: any other is a crash.
    private static func http2Head(_ bytes: [UInt8]) {
        let fields = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).prefix(64).map {
            line -> (name: String, value: String) in
            let colon = line.dropFirst().firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
            let value = line[colon...].dropFirst().drop { $0 == UInt8(ascii: " ") }
            return (String(decoding: line[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self))
        }
        guard case .request(let request) = DecodedHead(http2: fields) else { return }
        for (name, value) in fields {
            precondition(!name.isEmpty && !name.utf8.contains { $0 >= 0x41 && $0 <= 0x5A }, "a name kept: \(name)")
            precondition(!value.utf8.contains { $0 == 0 || $0 == 0x0A || $0 == 0x0D }, "a value kept: \(value)")
            precondition(!["connection", "transfer-encoding", "upgrade"].contains(name), "a field kept: \(name)")
        }
        _ = DecodedHead.originForm(request.target)
    }

    /// What the scanner does not read goes to the HTTP/1 decoder, as the server hands it the rest of the connection:
    /// each head it reads (a few at most) is read as the front reads it (``DecodedHead``: a request or a refusal).
    private static func decodedRequests(_ bytes: [UInt8]) {
        let channel = EmbeddedChannel(
            handler: ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        _ = try? channel.writeInbound(ByteBuffer(bytes: bytes))
        var heads = 0
        while heads < 8, let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
            guard case .head(let head) = part else { continue }
            heads += 1
            if case .request(let request) = DecodedHead(head) {
                _ = DecodedHead.originForm(request.target)
            }
        }
        _ = try? channel.finish()
    }

    private static func cmcd(_ text: String) {
        for report in [CMCDReport(query: Substring(text)), CMCDReport(headers: text)] {
            guard case .success(let cmcd) = report.data else { continue }
            precondition(cmcd.members.count <= CMCD.maxKeys, "more members than the limit")
            _ = cmcd.integer("bl")
            _ = cmcd.string("nor")
            _ = cmcd.flag("bs")
        }
        let target = "/o/https/cdn.example/a.ts?" + text
        let (kept, value) = CMCDQuery.split(target)
        guard value != nil else { return }
        let query = kept.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        for parameter in query.split(separator: "&", omittingEmptySubsequences: false) {
            precondition(parameter != "CMCD" && !parameter.hasPrefix("CMCD="), "a CMCD parameter kept: \(kept)")
        }
    }

    private static func view(_ bytes: [UInt8]) {
        let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        let query = String(decoding: bytes[..<newline], as: UTF8.self)
        let manifest = Array(bytes[min(newline + 1, bytes.count)...])
        let (kept, taken) = ViewQuery.split("/o/https/cdn.example/live/index.m3u8?" + query)
        let keptQuery = kept.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        for parameter in keptQuery.split(separator: "&") {
            precondition(!parameter.hasPrefix("hlscache."), "a view parameter kept: \(kept)")
        }
        guard let taken, let view = try? ManifestView(query: taken) else { return }
        precondition((try? ManifestView(query: view.canonicalQuery)) == view, "canonical spelling reads otherwise")
        _ = view.narrowed(by: view).carried(by: "/o/https/cdn.example/a.m3u8?x=1#f")
        let url = "https://origin.example/live/index.m3u8"
        if MPDManifest.looksLikeMPD(manifest) {
            _ = try? MPDManifest.rewrite(manifest, url: url, mapping: .proxy(base: ""), view: view)
            return
        }
        guard let playlist = try? Playlist(parsing: manifest) else { return }
        _ = try? playlist.viewed(by: view).rewritten(playlistURL: url, mapping: .proxy(base: ""))
        guard let bytes = try? playlist.rewritten(playlistURL: url, mapping: .custom { $0 }),
            let absolute = try? Playlist(parsing: bytes)
        else { return }
        var timeline = LiveTimeline()
        timeline.record(absolute, fetchedAt: 1000)
        timeline.record(absolute, fetchedAt: 1002)
        let now = 1004.0
        for text in [
            try? timeline.delayed(by: view.delaySeconds ?? 1, now: now),
            try? timeline.startOver(from: view.start ?? 999, until: view.end, now: now),
        ] {
            guard let text else { continue }
            precondition((try? Playlist(parsing: text)) != nil, "a playlist written from the history does not parse")
        }
    }

    /// The key policy of a server that leaves tokens out of keys (the other policy keeps URLs whole).
    private static let keys = CacheKeyPolicy(
        ignoredQuery: [try! QueryNamePattern("token"), try! QueryNamePattern("X-Amz-*")],
        ignoredManifestQuery: [try! QueryNamePattern("sig")])

    private static func target(_ text: String) {
        guard let origin = ProxyURL.origin(fromPath: text),
            let again = ProxyURL.make(origin: origin, base: "http://127.0.0.1:8080")
        else { return }
        _ = ProxyURL.origin(fromProxyURL: again, base: "http://127.0.0.1:8080")
    }
}
