/// A header sent with origin requests, to every host or to the hosts of one pattern (`--origin-header`): the
/// Referer, Origin, cookie or bearer token a CDN insists on.
public struct OriginHeader: Sendable, Equatable, CustomStringConvertible {
    /// The hosts it goes to: `*`, `*.example.com` or `cdn.example.com`.
    public let hostPattern: String
    /// The header name.
    public let name: String
    /// The value; never logged.
    public let value: String

    /// Names an operator may not set: they frame the message, belong to one connection, or are hlscache's to set.
    public static let refusedNames: Set<String> = [
        "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
        "content-length", "expect", "range", "accept-encoding", "user-agent",
    ]

    /// Parses `Name: value` or `host-pattern=Name: value`.
    /// - Throws: ``InvalidOriginHeader`` for a malformed line, a refused name, or a line break in the value.
    public init(parsing text: String) throws(InvalidOriginHeader) {
        guard let colon = text.firstIndex(of: ":") else { throw InvalidOriginHeader(text: text, reason: "no ':'") }
        var name = String(text[..<colon]).trimmingSpaces
        var pattern = "*"
        if let equals = name.firstIndex(of: "=") {
            pattern = String(name[..<equals]).trimmingSpaces
            name = String(name[name.index(after: equals)...]).trimmingSpaces
            guard !pattern.isEmpty else { throw InvalidOriginHeader(text: text, reason: "an empty host pattern") }
        }
        let value = String(text[text.index(after: colon)...]).trimmingSpaces
        guard PreparedRequest.invalidHeader(in: [(name, value)]) == nil else {
            throw InvalidOriginHeader(text: text, reason: "the name is not a token or the value has a line break")
        }
        guard !Self.refusedNames.contains(name.lowercased()), !name.lowercased().hasPrefix("proxy-") else {
            throw InvalidOriginHeader(
                text: text, reason: "\(name) is a hop-by-hop or framing header hlscache sets itself")
        }
        self.hostPattern = pattern
        self.name = name
        self.value = value
    }

    /// The same header for the hosts of `pattern` instead.
    /// - Parameter pattern: a host pattern.
    /// - Returns: the header, scoped.
    public func scoped(to pattern: String) -> OriginHeader {
        OriginHeader(hostPattern: pattern, name: name, value: value)
    }

    /// Whether it is sent to every host (`Name: value`, no pattern, or `*=`).
    public var isUnscoped: Bool { hostPattern == "*" }

    private init(hostPattern: String, name: String, value: String) {
        self.hostPattern = hostPattern
        self.name = name
        self.value = value
    }

    /// Whether it goes to `host` on `port` (a pattern with a port names that port only).
    func applies(to host: String, port: Int) -> Bool {
        HostPattern(hostPattern).matches(normalizedHost: HostPattern.normalize(host: host), port: port)
    }

    /// `host=Name: <redacted>`: the value is never shown.
    public var description: String { "\(hostPattern)=\(name): <redacted>" }
}

/// An `--origin-header` that cannot be sent.
public struct InvalidOriginHeader: Error, CustomStringConvertible {
    /// The text given (shown without its value).
    let text: String
    /// What is wrong with it.
    public let reason: String

    /// Names the header (without its value) and what to change. Text with no colon is not shown at all: it may be
    /// all value (a token pasted without its name).
    public var description: String {
        guard text.contains(":") else {
            return
                "--origin-header (\(text.utf8.count) characters, not shown): \(reason); give [host-pattern=]Name: value"
        }
        let shown = text.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        return "--origin-header \(shown): \(reason); give [host-pattern=]Name: value"
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var view = Substring(self)
        while view.first == " " || view.first == "\t" { view = view.dropFirst() }
        while view.last == " " || view.last == "\t" { view = view.dropLast() }
        return String(view)
    }
}
