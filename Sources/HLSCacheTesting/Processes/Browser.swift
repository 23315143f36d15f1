import Foundation

/// Headless Chromium (Debian's `chromium`) driven by Playwright, playing `Fixtures/browser/player.html`: video.js
/// over MSE, as web pages play HLS, or the browser's own `<video>`.
public enum Browser {
    /// Debian's Chromium.
    public static let chromium = "/usr/bin/chromium"

    /// The Python environment with Playwright and video.js (`Tests/Browser/requirements.txt`).
    public static var environment: URL { TestPaths.packageRoot.appendingPathComponent(".build/browser-venv") }

    /// What one page reached.
    public struct Playback: Decodable, Sendable, CustomStringConvertible {
        /// The page's `window.playerState`.
        public struct State: Decodable, Sendable {
            /// `vhs` or `native`.
            public var mode: String
            /// The playback position reached, seconds.
            public var time: Double
            /// The player's error, if it reported one.
            public var error: String?
            /// Whether the stream played to its end.
            public var ended: Bool
        }
        /// The page URL.
        public var url: String
        /// Its state when it got far enough, failed, or timed out; `nil` when the page never ran.
        public var state: State?
        /// Its last console lines.
        public var console: [String]

        /// Whether it played `seconds` without an error.
        public func played(_ seconds: Double) -> Bool { state.map { $0.error == nil && $0.time >= seconds } ?? false }

        /// The page, how far it got, and its console.
        public var description: String {
            "\(url): \(state.map { "\($0.mode) t=\($0.time) error=\($0.error ?? "none")" } ?? "no state") \(console)"
        }
    }

    /// A host name of the tests' own, resolved to 127.0.0.1 by the browser only (``play(_:seconds:timeout:trusting:loopbackNames:)``).
    public static let testHost = "hlscache.test"

    /// Creates the Python environment if it is missing (`Tests/Browser/setup.sh`, from PyPI).
    public static func prepare() async throws {
        let setup = TestPaths.packageRoot.appendingPathComponent("Tests/Browser/setup.sh").path
        let result = try await ChildProcess.run("/bin/bash", [setup, environment.path], timeout: 600)
        guard result.status == 0 else { throw BrowserError.setupFailed(result.errors) }
    }

    /// A folder with the player page and video.js, for an origin of its own to serve.
    public static func pageFolder() throws -> URL {
        let folder = URL(fileURLWithPath: ServerProcess.temporaryDirectory())
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let page = TestPaths.fixtures.appendingPathComponent("browser/player.html")
        try FileManager.default.copyItem(at: page, to: folder.appendingPathComponent("player.html"))
        let sitePackages = try FileManager.default.contentsOfDirectory(
            at: environment.appendingPathComponent("lib"), includingPropertiesForKeys: nil)
        guard let python = sitePackages.first else { throw BrowserError.setupFailed("no lib/python* in the venv") }
        let script = python.appendingPathComponent("site-packages/js/videojs/resources/video.min.js")
        try FileManager.default.copyItem(at: script, to: folder.appendingPathComponent("video.min.js"))
        return folder
    }

    /// The player page at `pageBase` playing `source` in `mode` (`vhs` or `native`).
    public static func pageURL(_ pageBase: String, source: String, mode: String) -> String {
        var components = URLComponents(string: pageBase + "/player.html")!
        components.queryItems = [URLQueryItem(name: "mode", value: mode), URLQueryItem(name: "src", value: source)]
        return components.string!
    }

    /// Opens every page at once in one browser and waits until each has played `seconds`, failed, or `timeout`
    /// seconds passed.
    /// - Parameters:
    ///   - trusting: the base64 SHA-256 of a test certificate's public key that the browser trusts (and no other that
    ///     the system does not).
    ///   - loopbackNames: host names the browser resolves to 127.0.0.1 (``testHost``): a page's `http://` request to
    ///     one is mixed content, as to any other host, where one to `127.0.0.1` is not.
    public static func play(
        _ pages: [String], seconds: Double, timeout: Double, trusting spki: String? = nil,
        loopbackNames: [String] = []
    ) async throws -> [Playback] {
        let python = environment.appendingPathComponent("bin/python").path
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/Browser/play.py").path
        var environment = ProcessInfo.processInfo.environment
        if let spki { environment["HLSCACHE_TEST_SPKI"] = spki }
        if !loopbackNames.isEmpty {
            environment["HLSCACHE_TEST_HOST_RULES"] = loopbackNames.map { "MAP \($0) 127.0.0.1" }.joined(separator: ",")
        }
        let result = try await ChildProcess.run(
            python, [script, chromium, String(seconds), String(timeout)] + pages, environment: environment,
            timeout: timeout + 60)
        let lines = result.output.split(separator: "\n")
        guard result.status == 0, lines.count == pages.count else {
            throw BrowserError.playFailed("status \(result.status): \(result.errors)")
        }
        return try lines.map { try JSONDecoder().decode(Playback.self, from: Data($0.utf8)) }
    }
}

/// A folder served over HTTPS by Python's `http.server` (`Tests/Browser/https_page.py`): a page of another origin
/// that is itself secure, as every real page is.
public final class HTTPSPageServer: Sendable {
    private let child: ChildProcess
    /// Its port.
    public let port: Int

    /// Serves `folder` on a free port with the given certificate and key; waits until it listens.
    public init(folder: URL, certificatePath: String, keyPath: String) throws {
        port = try freeLoopbackPort()
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/Browser/https_page.py").path
        child = try ChildProcess(
            "/usr/bin/python3", [script, folder.path, String(port), certificatePath, keyPath], environment: nil)
        let deadline = Date().addingTimeInterval(10)
        while !child.output.contains("listening"), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    }

    /// `https://127.0.0.1:<port>`.
    public var base: String { "https://127.0.0.1:\(port)" }

    /// Stops it.
    public func stop() {
        child.send(SIGTERM)
        child.waitForExit(timeout: 5)
    }
}

/// Why the browser could not be driven.
public enum BrowserError: Error, CustomStringConvertible {
    /// The Python environment could not be made: PyPI unreachable, or no `python3 -m venv`.
    case setupFailed(String)
    /// Playwright or Chromium failed to start.
    case playFailed(String)

    /// What failed and what to install.
    public var description: String {
        switch self {
        case .setupFailed(let detail): "cannot set up Playwright and video.js (Tests/Browser/setup.sh): \(detail)"
        case .playFailed(let detail): "cannot drive Chromium (is Debian's chromium installed?): \(detail)"
        }
    }
}
