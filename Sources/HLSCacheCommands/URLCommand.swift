import ArgumentParser
import HLSPlaylist
import ManifestURLs

/// `hlscache url`: prints the proxied URL of each origin URL, by the very function the server uses.
struct URLCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "url",
        abstract: "Print the hlscache URL of each origin URL, one per line, in order."
    )

    @Option(name: .long, help: "The front's base URL, e.g. http://127.0.0.1:8080.")
    var base: String = ""

    @Argument(help: "Absolute http(s) origin URLs.")
    var originURLs: [String]

    func validate() throws {
        guard !originURLs.isEmpty else { throw ValidationError("give at least one origin URL") }
        for url in originURLs where ProxyURL.make(origin: url, base: base) == nil {
            throw ValidationError("not an absolute http(s) URL with a host: \(url)")
        }
    }

    func run() throws {
        for url in originURLs {
            print(ProxyURL.make(origin: url, base: base)!)
        }
    }
}
