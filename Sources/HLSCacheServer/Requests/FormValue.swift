import Foundation

/// Reads `application/x-www-form-urlencoded` text: a query string or a form body.
enum FormValue {
    /// The value of `name` in a form-encoded query (`+` is a space, `%XX` decoded).
    static func value(_ name: String, in query: String) -> String? {
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == name else { continue }
            return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
        }
        return nil
    }
}
