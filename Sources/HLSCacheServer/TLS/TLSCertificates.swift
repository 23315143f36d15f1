import Foundation
import Logging
import NIOCore
import NIOSSL
import Synchronization

/// The server's certificate and key (`--tls-certificate`, `--tls-key`), and the TLS context new handshakes use:
/// loaded at start (a pair that does not load stops the server with the reason), and again on `SIGHUP` or when either
/// file changes (``TLSReloadService``). A pair that does not load then (unreadable, a key that does not match, expired
/// or not yet valid) keeps the old one, and the log says why; open connections go on with what they began with.
///
/// The context: TLS 1.2 and 1.3 only; for 1.2, forward-secret AEAD suites only (ECDHE with AES-GCM or ChaCha20; 1.3's
/// are all such); ALPN `h2` then `http/1.1`.
final class TLSCertificates: Sendable {
    /// Where the pair is read from.
    let certificatePath: String
    let keyPath: String

    private struct Loaded {
        var context: NIOSSLContext
        var files: FileStamps
        /// The leaf certificate's end of validity (seconds since 1970).
        var notValidAfter: Int
    }

    private let loaded: Mutex<Loaded>

    /// TLS 1.2 suites: ECDHE key exchange, AEAD ciphers (BoringSSL's names).
    static let cipherSuites =
        "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
        + "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

    /// The protocols offered by ALPN, in order of preference.
    static let applicationProtocols = ["h2", "http/1.1"]

    /// Loads the pair.
    /// - Throws: ``TLSSetupError`` naming the file and the problem.
    init(certificatePath: String, keyPath: String, now: Date = Date()) throws(TLSSetupError) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
        loaded = Mutex(try Self.load(certificatePath: certificatePath, keyPath: keyPath, now: now))
    }

    /// The context a new handshake uses.
    var context: NIOSSLContext { loaded.withLock { $0.context } }

    /// The current certificate's end of validity, seconds since 1970.
    var notValidAfter: Int { loaded.withLock { $0.notValidAfter } }

    /// Loads the pair again: always when `force` (`SIGHUP`), else only when either file changed since it was last
    /// loaded (or tried).
    /// - Returns: whether new handshakes now use a new pair; a pair that does not load is logged and the old one kept.
    @discardableResult
    func reload(force: Bool, logger: Logger, now: Date = Date()) -> Bool {
        let stamps = FileStamps(certificatePath, keyPath)
        let changed = loaded.withLock { $0.files != stamps }
        guard force || changed else { return false }
        do throws(TLSSetupError) {
            let fresh = try Self.load(certificatePath: certificatePath, keyPath: keyPath, now: now)
            loaded.withLock { $0 = fresh }
            logger.info(
                "TLS certificate loaded",
                metadata: [
                    "certificate": "\(certificatePath)",
                    "not_valid_after": "\(Date(timeIntervalSince1970: TimeInterval(fresh.notValidAfter)))",
                ])
            return true
        } catch {
            // Tried once per change: the next check does not log it again unless the files change again.
            loaded.withLock { $0.files = stamps }
            logger.error(
                "TLS certificate not reloaded, the previous one stays in use",
                metadata: ["certificate": "\(certificatePath)", "reason": "\(error.description)"])
            return false
        }
    }

    private static func load(certificatePath: String, keyPath: String, now: Date) throws(TLSSetupError) -> Loaded {
        let stamps = FileStamps(certificatePath, keyPath)
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw TLSSetupError(file: certificatePath, problem: "is not a readable PEM certificate chain (\(error))")
        }
        guard let leaf = chain.first else {
            throw TLSSetupError(file: certificatePath, problem: "holds no certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw TLSSetupError(file: keyPath, problem: "is not a readable PEM private key (\(error))")
        }
        let seconds = Int(now.timeIntervalSince1970)
        let notValidAfter = Int(leaf.notValidAfter)
        guard notValidAfter > seconds else {
            throw TLSSetupError(
                file: certificatePath,
                problem: "expired on \(Date(timeIntervalSince1970: TimeInterval(notValidAfter))); renew it")
        }
        guard Int(leaf.notValidBefore) <= seconds + 300 else {
            throw TLSSetupError(
                file: certificatePath,
                problem: "is not valid before \(Date(timeIntervalSince1970: TimeInterval(leaf.notValidBefore)))")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuites = cipherSuites
        configuration.applicationProtocols = applicationProtocols
        // A close waits this long at most for the client's `close_notify` (a client that stopped reading sends none).
        configuration.shutdownTimeout = .seconds(2)
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw TLSSetupError(
                file: keyPath,
                problem: "does not make a TLS context with \(certificatePath) (\(error)): does the key match?")
        }
        return Loaded(context: context, files: stamps, notValidAfter: notValidAfter)
    }
}

/// A certificate or key that does not load: which file, and why.
struct TLSSetupError: Error, CustomStringConvertible {
    var file: String
    var problem: String

    var description: String { "\(file) \(problem)" }
}

/// What tells that a file changed: its inode, size and modification time (an ACME client replaces files by renaming;
/// `cp` over them keeps the inode but not the time).
struct FileStamps: Equatable, Sendable {
    private var stamps: [[Int]]

    init(_ paths: String...) {
        stamps = paths.map { path in
            var info = stat()
            guard stat(path, &info) == 0 else { return [] }
            return [
                Int(info.st_ino), Int(info.st_size), Int(info.st_mtim.tv_sec), Int(info.st_mtim.tv_nsec),
            ]
        }
    }
}
