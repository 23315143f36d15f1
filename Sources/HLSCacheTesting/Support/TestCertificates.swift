import Foundation

/// Certificates the tests make with `openssl`, in a temporary directory removed at exit: a test CA, and leaf
/// certificates it signs for `127.0.0.1` and `localhost` (P-256 keys: made in milliseconds).
public struct TestCertificates: Sendable {
    /// The directory that holds every file.
    public let directory: String
    /// The CA's certificate (PEM): what a client trusts (`curl --cacert`).
    public var caPath: String { directory + "/ca.pem" }

    /// A leaf: its certificate chain and key files.
    public struct Leaf: Sendable {
        /// The certificate (PEM).
        public let certificatePath: String
        /// Its private key (PEM).
        public let keyPath: String
    }

    /// Makes a CA in a new temporary directory.
    public static func make() async throws -> TestCertificates {
        let directory = ServerProcess.temporaryDirectory()
        let certificates = TestCertificates(directory: directory)
        try await certificates.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
            directory + "/ca.key", "-out", directory + "/ca.pem", "-days", "2", "-subj", "/CN=hlscache test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        return certificates
    }

    /// A leaf for `127.0.0.1`, `localhost` and `hlscache.test` (``Browser/testHost``), signed by the CA, named `name`, with common name `commonName`.
    /// - Parameter days: days of validity from now: a negative number makes one that has already expired.
    public func leaf(_ name: String, commonName: String = "hlscache test", days: Int = 2) async throws -> Leaf {
        let key = directory + "/\(name).key"
        let request = directory + "/\(name).csr"
        let certificate = directory + "/\(name).pem"
        let extensions = directory + "/\(name).ext"
        try "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:hlscache.test\nextendedKeyUsage=serverAuth\n".write(
            toFile: extensions, atomically: true, encoding: .utf8)
        try await openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", request,
            "-subj", "/CN=\(commonName)",
        ])
        guard days <= 0 else {
            try await openssl([
                "x509", "-req", "-in", request, "-CA", caPath, "-CAkey", directory + "/ca.key", "-CAcreateserial",
                "-out", certificate, "-extfile", extensions, "-days", String(days),
            ])
            return Leaf(certificatePath: certificate, keyPath: key)
        }
        // One that has expired: OpenSSL 3.0's `x509` takes no start or end date, `ca` does (with a database of its own).
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        let end = formatter.string(from: Date().addingTimeInterval(TimeInterval(days) * 86400 - 3600))
        let start = formatter.string(from: Date().addingTimeInterval(TimeInterval(days) * 86400 - 7200))
        let database = directory + "/ca-\(name)"
        try FileManager.default.createDirectory(atPath: database, withIntermediateDirectories: true)
        try "".write(toFile: database + "/index.txt", atomically: true, encoding: .utf8)
        try "01\n".write(toFile: database + "/serial", atomically: true, encoding: .utf8)
        let configuration = """
            [ca]
            default_ca = test
            [test]
            database = \(database)/index.txt
            new_certs_dir = \(database)
            serial = \(database)/serial
            default_md = sha256
            policy = any
            [any]
            commonName = supplied

            """
        try configuration.write(toFile: database + "/ca.cnf", atomically: true, encoding: .utf8)
        try await openssl([
            "ca", "-batch", "-notext", "-config", database + "/ca.cnf", "-cert", caPath, "-keyfile",
            directory + "/ca.key", "-in", request, "-out", certificate, "-extfile", extensions, "-startdate", start,
            "-enddate", end,
        ])
        return Leaf(certificatePath: certificate, keyPath: key)
    }

    /// The base64 SHA-256 of a leaf's public key (SubjectPublicKeyInfo): what Chromium's
    /// `--ignore-certificate-errors-spki-list` trusts.
    public func publicKeyHash(of leaf: Leaf) async throws -> String {
        let result = try await ChildProcess.run(
            "/bin/sh",
            [
                "-c",
                "openssl x509 -in \"$1\" -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
                "sh", leaf.certificatePath,
            ], timeout: 60)
        guard result.status == 0 else { throw ServerProcessError.didNotStart("openssl: \(result.errors)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A key that belongs to no certificate here.
    public func strayKey(_ name: String) async throws -> String {
        let key = directory + "/\(name).key"
        try await openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
        return key
    }

    private func openssl(_ arguments: [String]) async throws {
        let result = try await ChildProcess.run("/usr/bin/openssl", arguments, timeout: 60)
        guard result.status == 0 else {
            throw ServerProcessError.didNotStart("openssl \(arguments.joined(separator: " ")): \(result.errors)")
        }
    }
}

/// `curl` against a server, as a player's HTTP stack would: over HTTPS with the test CA.
public enum Curl {
    /// What one request gave.
    public struct Answer: Sendable {
        /// The status (0: no answer).
        public var status: Int
        /// curl's exit status.
        public var exitStatus: Int32
        /// The HTTP version (`1.1`, `2`), and the TLS version curl negotiated, when it says.
        public var httpVersion: String
        /// The body.
        public var body: [UInt8]
        /// The header lines of the answer, lowercased names.
        public var headers: [String: String]
        /// What curl wrote on its standard error.
        public var errors: String
    }

    /// `curl URL` with `arguments` (e.g. `--cacert`, `--http2`), its body written to a file then read.
    public static func get(_ url: String, _ arguments: [String] = []) async throws -> Answer {
        let directory = ServerProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bodyPath = directory + "/body"
        let headersPath = directory + "/headers"
        let result = try await ChildProcess.run(
            "/usr/bin/curl",
            ["-sS", "-o", bodyPath, "-D", headersPath, "-w", "%{http_code} %{http_version}", "--max-time", "30"]
                + arguments + [url], timeout: 60)
        let parts = result.output.split(separator: " ")
        var headers: [String: String] = [:]
        let head = (try? String(contentsOfFile: headersPath, encoding: .utf8)) ?? ""
        for line in head.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...]).trimmingCharacters(
                in: .whitespaces)
        }
        let body = (try? Data(contentsOf: URL(fileURLWithPath: bodyPath))).map { [UInt8]($0) } ?? []
        return Answer(
            status: parts.first.flatMap { Int($0) } ?? 0, exitStatus: result.status,
            httpVersion: parts.count > 1 ? String(parts[1]) : "", body: body, headers: headers, errors: result.errors)
    }
}
