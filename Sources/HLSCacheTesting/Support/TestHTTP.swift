import Foundation
import Glibc
import OriginClient

/// A plain HTTP client for the tests, on loopback: the project's libcurl client with private networks allowed
/// and no retries, so that every request the test makes is one request the server sees.
public enum TestHTTP {
    /// A response read whole.
    public struct Answer: Sendable {
        /// The status code.
        public var status: Int
        /// The headers, names in lower case.
        public var headers: [(name: String, value: String)]
        /// The body.
        public var body: [UInt8]

        /// The first value of header `name`.
        public func header(_ name: String) -> String? {
            headers.first { $0.name == name.lowercased() }?.value
        }

        /// The body as UTF-8 text.
        public var text: String { String(decoding: body, as: UTF8.self) }

        /// When the server answered, by its `Date` header (one-second resolution): a test whose requests a loaded
        /// machine may send late can tell when they really arrived.
        public var date: Date? {
            header("date").flatMap { Answer.httpDate.date(from: $0) }
        }

        private static let httpDate: DateFormatter = {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
            return formatter
        }()
    }

    /// The client every test request goes through.
    public static let client: OriginClient = {
        var configuration = OriginClientConfiguration(
            policy: AddressPolicy(allowedHosts: ["*"], allowPrivateNetworks: true),
            timeouts: OriginTimeouts(
                connect: .seconds(5), firstByte: .seconds(30), stall: .seconds(30), total: .seconds(120)))
        configuration.maxRetries = 0
        configuration.maxRedirects = 0
        return try! OriginClient(configuration: configuration)
    }()

    /// Fetches `url`; the body read whole. Throws when the response is cut short.
    public static func get(
        _ url: String, headers: [(name: String, value: String)] = [], head: Bool = false
    ) async throws -> Answer {
        let request = OriginRequest(url: url, method: head ? .head : .get, headers: headers)
        let response = try await client.fetch(request)
        var body: [UInt8] = []
        for try await chunk in response.body { body.append(contentsOf: chunk) }
        return Answer(status: response.status, headers: response.headers, body: body)
    }

    /// Sends a request of any method (`PURGE`, `POST`…) with the curl command, off the concurrency pool.
    /// - Parameters:
    ///   - method: the method.
    ///   - url: the URL.
    ///   - headers: `Name: value` lines.
    ///   - body: a request body, sent as it is.
    /// - Returns: the status, the headers (names in lower case) and the body as text.
    public static func send(
        _ method: String, _ url: String, headers: [String] = [], body: String? = nil
    ) async throws -> (status: Int, headers: [String: String], text: String) {
        var arguments = ["-s", "-i", "-X", method, url]
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["--data-binary", body] }
        let result = try await ChildProcess.run("/usr/bin/curl", arguments)
        let parts = result.output.components(separatedBy: "\r\n\r\n")
        let (status, fields) = head(parts.first ?? "")
        return (status, fields, parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// Fetches `url` into the file `path` with the curl command, off the concurrency pool: for bodies of tens of
    /// megabytes, which a debug build would otherwise copy an element at a time on a pool thread.
    /// - Returns: the status and the headers (names in lower case).
    public static func download(
        _ url: String, to path: String, headers: [String] = []
    ) async throws -> (status: Int, headers: [String: String]) {
        let fields = headers.flatMap { ["-H", $0] }
        let result = try await ChildProcess.run("/usr/bin/curl", ["-s", "-o", path, "-D", "-"] + fields + [url])
        return head(result.output)
    }

    /// The status and headers (names in lower case) of a head curl printed.
    private static func head(_ text: String) -> (status: Int, headers: [String: String]) {
        var lines = text.components(separatedBy: "\r\n")
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

/// Whether two byte arrays are equal, compared with `memcmp`: `==` on a debug build walks tens of megabytes an
/// element at a time, on one of the pool threads the in-process origins need.
public func sameBytes(_ first: [UInt8], _ second: some Collection<UInt8>) -> Bool {
    let second = Array(second)
    guard first.count == second.count else { return false }
    guard !first.isEmpty else { return true }
    return first.withUnsafeBytes { a in
        second.withUnsafeBytes { b in memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 }
    }
}
