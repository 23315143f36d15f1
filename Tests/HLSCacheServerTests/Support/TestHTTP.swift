import Foundation
import OriginClient
import Synchronization

/// A plain HTTP client for the tests, on loopback: the project's libcurl client with private networks allowed
/// and no retries, so that every request the test makes is one request the server sees.
enum TestHTTP {
    struct Answer: Sendable {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.name == name.lowercased() }?.value
        }

        var text: String { String(decoding: body, as: UTF8.self) }
    }

    static let client: OriginClient = {
        var configuration = OriginClientConfiguration(
            policy: AddressPolicy(allowedHosts: ["*"], allowPrivateNetworks: true),
            timeouts: OriginTimeouts(
                connect: .seconds(5), firstByte: .seconds(30), stall: .seconds(30), total: .seconds(120)))
        configuration.maxRetries = 0
        configuration.maxRedirects = 0
        return try! OriginClient(configuration: configuration)
    }()

    /// Fetches `url`; the body read whole. Throws when the response is cut short.
    static func get(
        _ url: String, headers: [(name: String, value: String)] = [], head: Bool = false
    ) async throws -> Answer {
        let request = OriginRequest(url: url, method: head ? .head : .get, headers: headers)
        let response = try await client.fetch(request)
        var body: [UInt8] = []
        for try await chunk in response.body { body.append(contentsOf: chunk) }
        return Answer(status: response.status, headers: response.headers, body: body)
    }

    /// Fetches `url` into the file `path` with the curl command, off the concurrency pool: for bodies of tens of
    /// megabytes, which a debug build would otherwise copy an element at a time on a pool thread.
    /// - Returns: the status and the headers (names in lower case).
    static func download(_ url: String, to path: String) async throws -> (status: Int, headers: [String: String]) {
        try await offPool {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            process.arguments = ["-s", "-o", path, "-D", "-", url]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let head = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            var lines = head.components(separatedBy: "\r\n")
            let status = Int(lines.removeFirst().split(separator: " ").dropFirst().first ?? "") ?? 0
            var headers: [String: String] = [:]
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
            return (status, headers)
        }
    }
}

/// Runs ffmpeg, the player of the acceptance tests.
enum FFmpeg {
    /// `ffmpeg -i URL -map 0 -c copy -f framemd5 -`: one line per packet with its checksum.
    static func framemd5(
        _ url: String, extraArguments: [String] = []
    ) async throws -> (
        status: Int32, output: String, errors: String
    ) {
        try await run(
            ["-nostdin", "-v", "error"] + extraArguments + [
                "-i", url, "-map", "0", "-c", "copy", "-f", "framemd5", "-",
            ])
    }

    /// Runs ffmpeg with `arguments`.
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
        try await offPool { try runBlocking(arguments) }
    }

    private static func runBlocking(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let errorData = Mutex(Data())
        let reader = Thread { errorData.withLock { $0 = errors.fileHandleForReading.readDataToEndOfFile() } }
        reader.start()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while reader.isExecuting { Thread.sleep(forTimeInterval: 0.01) }
        return (
            process.terminationStatus, String(decoding: out, as: UTF8.self),
            String(decoding: errorData.withLock { $0 }, as: UTF8.self)
        )
    }
}

/// Where the repository's fixtures are.
enum TestPaths {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let streams = root.appendingPathComponent("Fixtures/streams")
}

/// Runs blocking work (waiting for a process) on a thread of its own, never on the concurrency pool, whose two
/// threads the in-process origin needs.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// Whether two byte arrays are equal, compared with `memcmp`: `==` on a debug build walks tens of megabytes an
/// element at a time, on one of the two pool threads the in-process origins need.
func sameBytes(_ first: [UInt8], _ second: some Collection<UInt8>) -> Bool {
    let second = Array(second)
    guard first.count == second.count else { return false }
    guard !first.isEmpty else { return true }
    return first.withUnsafeBytes { a in
        second.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
    }
}
