import Foundation

/// What an origin's `Cache-Control`, `Expires` and `Age` headers say about freshness.
package struct CacheDirectives: Sendable, Hashable {
    /// Seconds the answer stays fresh from when it was generated (`s-maxage` wins over `max-age`).
    package var maxAge: Int?
    /// `Expires`, when it parses and no `max-age` was given.
    package var expires: Date?
    /// `Age`: seconds the answer already spent in caches before us.
    package var age: Int = 0
    /// `no-store` or `private`: a shared cache must not keep it.
    package var noStore = false
    /// `no-cache`: it may be kept, but must be revalidated before every use.
    package var noCache = false

    /// Reads the directives from response headers (names in lower case).
    /// - Parameter header: looks a header up by lower-case name.
    package init(header: (String) -> String?) {
        if let cacheControl = header("cache-control") {
            for directive in cacheControl.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
                let value = parts.count > 1 ? parts[1].trimmingCharacters(in: CharacterSet(charactersIn: " \"")) : ""
                switch name {
                case "max-age": maxAge = maxAge ?? Self.deltaSeconds(value)
                case "s-maxage": maxAge = Self.deltaSeconds(value) ?? maxAge
                case "no-store", "private": noStore = true
                case "no-cache": noCache = true
                default: break
                }
            }
        }
        if maxAge == nil, let expiresText = header("expires") {
            expires = HTTPDate.parse(expiresText) ?? .distantPast  // an invalid Expires means "already expired"
        }
        age = header("age").flatMap { Self.deltaSeconds($0.trimmingCharacters(in: .whitespaces)) } ?? 0
    }

    /// The longest freshness taken from an origin: a year (RFC 9111 lets a cache cap delta-seconds; this keeps
    /// every expiry a representable date).
    package static let maxDeltaSeconds = 365 * 86_400

    /// RFC 9111 delta-seconds: digits only, clamped to ``maxDeltaSeconds`` (a larger or overflowing value means
    /// "a long time", not an error).
    package static func deltaSeconds(_ text: some StringProtocol) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return min(Int(text) ?? maxDeltaSeconds, maxDeltaSeconds)
    }

    /// When the answer stops being fresh, by these headers alone; `nil` when they say nothing.
    /// - Parameter now: when the answer was received.
    package func expiry(receivedAt now: Date) -> Date? {
        if noCache { return now }
        if let maxAge { return now.addingTimeInterval(TimeInterval(max(0, maxAge - age))) }
        guard let expires else { return nil }
        return min(expires, now.addingTimeInterval(TimeInterval(Self.maxDeltaSeconds)))
    }
}
