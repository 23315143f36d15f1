import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization

/// The origin of the tests: a Hummingbird 2 application on 127.0.0.1 that serves `Fixtures/streams`, honours
/// single `Range` requests, counts every request by path, and misbehaves on the paths it is told to.
///
/// `/live/index.m3u8` (and `/live/dated.m3u8`, with each segment's date) is a live playlist over `live-source/`: a
/// window of ``liveWindow`` (4 by default) 2-second
/// segments that advances every 2 s from when the origin started (`/live/seg<N>.ts` is `live-source/seg<N mod 20>.ts`).
/// `/large/<N>.ts` is N bytes of ``pattern(count:)``. The routes the origin client's tests use (`/bytes`, `/status`, redirects…) are
/// listed in ``route(_:seen:)``.
public final class StreamOrigin: Sendable {
    /// How a path misbehaves.
    public enum Behavior: Sendable {
        /// Answer this status with a short body.
        case status(Int)
        /// Answer 200 with this body and content type.
        case body(String, contentType: String)
        /// Answer 200 with this body and exactly these headers.
        case answer(String, headers: HTTPFields)
        /// Wait, then serve normally.
        case delay(Duration)
        /// Wait, then answer this status with a short body.
        case delayedStatus(Duration, Int)
        /// Send nothing for a minute.
        case stall
        /// Answer 302 to this URL.
        case redirect(String)
        /// Serve normally the first time, then answer this status.
        case thenStatus(Int)
        /// Send the headers and half the body, then wait this long before the rest.
        case slowSecondHalf(Duration)
        /// Serve normally when the request has this header with this value, else answer 403.
        case requiring(header: String, value: String)
        /// Send the body one line at a time, this long apart (a trickling origin).
        case trickle(Duration)
        /// A signed URL: answer 403 unless the query has this parameter with a value; a playlist's URI lines get
        /// the same `?name=value`, as a CDN's per-viewer tokens do.
        case signed(parameter: String)
    }

    private let requests = Mutex<[String: Int]>([:])
    private let firstSeen = Mutex<[String: ContinuousClock.Instant]>([:])
    private let queries = Mutex<[String]>([])
    private let cmcdSeen = Mutex<[(target: String, fields: [String])]>([])
    private let behaviors = Mutex<[String: Behavior]>([:])
    /// When the origin was made: the live playlist's clock.
    public let started = Date()
    /// Seconds per live segment.
    public static let liveSegmentSeconds = 2.0

    /// The port, once running.
    public private(set) nonisolated(unsafe) var port = 0
    private nonisolated(unsafe) var task: Task<Void, any Error>?

    /// `http://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Requests received for `path` (query ignored).
    public func count(_ path: String) -> Int { requests.withLock { $0[path] ?? 0 } }

    /// When the first request for `path` (query ignored) arrived.
    public func firstRequest(of path: String) -> ContinuousClock.Instant? { firstSeen.withLock { $0[path] } }

    /// Every request so far, by path.
    public var counts: [String: Int] { requests.withLock { $0 } }

    /// Total requests received.
    public var total: Int { requests.withLock { $0.values.reduce(0, +) } }

    /// The full targets (with queries) received, in order.
    public var targets: [String] { queries.withLock { $0 } }

    /// The `CMCD-*` fields of every request that carried some, by full target, in order (`name: value` as received).
    public var cmcdFields: [(target: String, fields: [String])] { cmcdSeen.withLock { $0 } }

    /// Makes `path` misbehave.
    public func set(_ path: String, _ behavior: Behavior?) { behaviors.withLock { $0[path] = behavior } }

    /// The folder files are served from.
    public let root: URL

    /// How many segments the live playlist lists (a live origin's window).
    public let liveWindow: Int

    /// An origin not yet started, serving `root` (the fixture streams by default).
    /// - Parameters:
    ///   - root: the folder served.
    ///   - liveWindow: how many segments the live playlist lists, at least 1.
    public init(root: URL = TestPaths.streams, liveWindow: Int = 4) {
        self.root = root
        self.liveWindow = max(1, liveWindow)
    }

    /// Runs `body` with a started origin, and stops it afterwards.
    public static func withRunning<T: Sendable>(_ body: (StreamOrigin) async throws -> T) async throws -> T {
        let origin = StreamOrigin()
        try await origin.start()
        defer { origin.stop() }
        return try await body(origin)
    }

    /// Starts the origin and waits for its port.
    public func start() async throws {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let responder = CallbackResponder<BasicRequestContext> { [self] request, _ in
            try await self.respond(request)
        }
        let app = Application(
            responder: responder,
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }
        )
        let group = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [], logger: app.logger))
        task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        port = await iterator.next() ?? 0
    }

    /// Stops the origin: from now on every request is a `503` that closes its connection, and none is counted. Its
    /// port stays open until the process ends: closing a listening `NIOAsyncChannel`, like cancelling or shutting down
    /// its server, traps in swift-nio's `NIOAsyncWriter` when a connection was accepted but not yet served
    /// (apple/swift-nio#3481), which took whole runs down three times (once with each way of stopping).
    public func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    /// Whether ``stop()`` was called.
    private let stopped = Atomic<Bool>(false)

    private func respond(_ request: Request) async throws -> Response {
        guard !stopped.load(ordering: .relaxed) else {
            return Response(status: .serviceUnavailable, headers: [.connection: "close"], body: .init())
        }
        let path = request.uri.path
        let seen = requests.withLock { requests in
            requests[path, default: 0] += 1
            return requests[path]!
        }
        if seen == 1 { firstSeen.withLock { $0[path] = $0[path] ?? .now } }
        queries.withLock { $0.append(request.head.path ?? path) }
        let cmcd = request.headers.filter { $0.name.canonicalName.lowercased().hasPrefix("cmcd-") }
            .map { "\($0.name.canonicalName): \($0.value)" }
        if !cmcd.isEmpty { cmcdSeen.withLock { $0.append((request.head.path ?? path, cmcd)) } }
        switch behaviors.withLock({ $0[path] }) {
        case .status(let code)?:
            return Response(status: .init(code: code), body: .init(byteBuffer: ByteBuffer(string: "status \(code)\n")))
        case .body(let text, let contentType)?:
            return Response(
                status: .ok, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(string: text)))
        case .answer(let text, let headers)?:
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
        case .delay(let duration)?:
            try await Task.sleep(for: duration)
        case .delayedStatus(let duration, let code)?:
            try await Task.sleep(for: duration)
            return Response(status: .init(code: code), body: .init(byteBuffer: ByteBuffer(string: "status \(code)\n")))
        case .stall?:
            try await Task.sleep(for: .seconds(60))
        case .redirect(let location)?:
            return Response(status: .found, headers: [.location: location])
        case .requiring(let name, let value)?:
            guard let field = HTTPField.Name(name), request.headers[field] == value else {
                return Response(status: .forbidden, body: .init(byteBuffer: ByteBuffer(string: "no \(name)\n")))
            }
        case .signed(let name)?:
            let query = request.uri.query ?? ""
            guard let pair = query.split(separator: "&").first(where: { $0.hasPrefix(name + "=") }),
                pair.count > name.count + 1
            else {
                return Response(status: .forbidden, body: .init(byteBuffer: ByteBuffer(string: "no \(name)\n")))
            }
            if path.hasSuffix(".m3u8"), let bytes = file(for: path) {
                let signed = String(decoding: bytes, as: UTF8.self).split(
                    separator: "\n", omittingEmptySubsequences: false
                )
                .map { $0.isEmpty || $0.hasPrefix("#") ? String($0) : "\($0)?\(pair)" }.joined(separator: "\n")
                return Response(
                    status: .ok, headers: [.contentType: Self.contentType(path)],
                    body: .init(byteBuffer: ByteBuffer(string: signed)))
            }
        case .trickle(let pause)?:
            let text: String
            if path == "/live/index.m3u8" {
                text = liveText()
            } else if let bytes = file(for: path) {
                text = String(decoding: bytes, as: UTF8.self)
            } else {
                return Response(status: .notFound)
            }
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0 + "\n" }
            return Response(
                status: .ok, headers: [.contentType: Self.contentType(path)],
                body: ResponseBody { writer in
                    for line in lines {
                        try await writer.write(ByteBuffer(string: String(line)))
                        try await Task.sleep(for: pause)
                    }
                    try await writer.finish(nil)
                })
        case .thenStatus(let code)? where seen > 1:
            return Response(status: .init(code: code), body: .init(byteBuffer: ByteBuffer(string: "status \(code)\n")))
        case .slowSecondHalf(let pause)?:
            guard let bytes = file(for: path) else { return Response(status: .notFound) }
            let half = bytes.count / 2
            return Response(
                status: .ok, headers: [.contentType: "video/mp2t"],
                body: ResponseBody(contentLength: bytes.count) { writer in
                    try await writer.write(ByteBuffer(bytes: bytes[0..<half]))
                    try await Task.sleep(for: pause)
                    try await writer.write(ByteBuffer(bytes: bytes[half...]))
                    try await writer.finish(nil)
                })
        case .thenStatus?, nil:
            break
        }
        if let routed = route(request, seen: seen) { return routed }
        if path == "/live/index.m3u8" { return livePlaylist() }
        if path == "/live/dated.m3u8" { return livePlaylist(dated: true) }
        guard let bytes = file(for: path) else {
            return Response(status: .notFound, body: .init(byteBuffer: ByteBuffer(string: "no such file\n")))
        }
        var headers: HTTPFields = [.contentType: Self.contentType(path), .acceptRanges: "bytes"]
        if let range = request.headers[.range], let (first, last) = Self.parse(range: range, length: bytes.count) {
            headers[.contentRange] = "bytes \(first)-\(last)/\(bytes.count)"
            return Response(
                status: .partialContent, headers: headers,
                body: .init(byteBuffer: ByteBuffer(bytes: bytes[first...last])))
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The fixture file for a path; `/live/seg<N>.ts` maps onto the 20 live-source segments, and
    /// `/large/<N>.ts` is N bytes of a fixed pattern (no two neighbouring 4 KiB blocks alike).
    public func file(for path: String) -> [UInt8]? {
        if path.hasPrefix("/large/"), let count = Int(path.dropFirst(7).prefix { $0.isNumber }) {
            return Self.pattern(count: count)
        }
        var relative = String(path.dropFirst())
        if relative.hasPrefix("live/seg"), let number = Int(relative.dropFirst(8).dropLast(3)) {
            relative = "live-source/seg\(number % 20).ts"
        }
        guard !relative.contains(".."), !relative.isEmpty else { return nil }
        return FileManager.default.contents(atPath: root.appendingPathComponent(relative).path).map {
            [UInt8]($0)
        }
    }

    /// The newest live segment's number now.
    public var liveEdge: Int { Int(Date().timeIntervalSince(started) / Self.liveSegmentSeconds) + liveWindow - 1 }

    private func livePlaylist(dated: Bool = false) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/vnd.apple.mpegurl"],
            body: .init(byteBuffer: ByteBuffer(string: liveText(dated: dated))))
    }

    /// The live playlist; `dated` (`/live/dated.m3u8`) gives each segment its `EXT-X-PROGRAM-DATE-TIME`
    /// (``liveDate(of:)``).
    private func liveText(dated: Bool = false) -> String {
        let newest = liveEdge
        let first = newest - (liveWindow - 1)
        var text = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n"
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for number in first...newest {
            if dated { text += "#EXT-X-PROGRAM-DATE-TIME:" + formatter.string(from: liveDate(of: number)) + "\n" }
            text += "#EXTINF:2.000000,\nseg\(number).ts\n"
        }
        return text
    }

    /// The date of live segment `number` in `/live/dated.m3u8`: when it became the newest.
    public func liveDate(of number: Int) -> Date {
        started.addingTimeInterval(Double(number - (liveWindow - 1)) * Self.liveSegmentSeconds)
    }

    /// `count` bytes whose every 4 KiB block differs from its neighbours, so a misplaced block shows: byte `i` is
    /// `31 i + 7 (i >> 12)` modulo 256. Assembled from its 256 distinct blocks, so that even a debug build makes
    /// 32 MiB in a few milliseconds (the tests share two pool threads with the in-process origins).
    public static func pattern(count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        var block = 0
        while bytes.count < count {
            let take = min(4096, count - bytes.count)
            bytes.append(contentsOf: patternBlocks[block % 256][..<take])
            block += 1
        }
        return bytes
    }

    private static let patternBlocks: [[UInt8]] = (0..<256).map { block in
        (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ block &* 7) }
    }

    /// The `Content-Type` of a fixture, by extension.
    public static func contentType(_ path: String) -> String {
        if path.hasSuffix(".m3u8") { return "application/vnd.apple.mpegurl" }
        if path.hasSuffix(".mpd") { return "application/dash+xml" }
        if path.hasSuffix(".ts") { return "video/mp2t" }
        if path.hasSuffix(".m4s") || path.hasSuffix(".mp4") { return "video/mp4" }
        if path.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if path.hasSuffix(".js") { return "text/javascript" }
        return "application/octet-stream"
    }

    /// The first and last byte of a single `Range` within `length` bytes; `nil` when it is not one.
    public static func parse(range: String, length: Int) -> (Int, Int)? {
        guard range.hasPrefix("bytes="), !range.contains(",") else { return nil }
        let parts = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty, let count = Int(parts[1]) { return (max(0, length - count), length - 1) }
        guard let first = Int(parts[0]), first < length else { return nil }
        let last = Int(parts[1]).map { min($0, length - 1) } ?? length - 1
        return first <= last ? (first, last) : nil
    }
}
