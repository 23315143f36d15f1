/// The `hlscache.*` parameters of a request target (a manifest view): taken out where the request is read, so that
/// no cache key or origin request sees them; the server reads them as the request's view.
package enum ViewQuery {
    /// The target without its `hlscache.*` parameters, and those parameters joined with `&` as written. A target
    /// with none is returned as it is, after one scan of its query's bytes.
    package static func split(_ target: String) -> (target: String, view: String?) {
        guard let question = target.utf8.firstIndex(of: UInt8(ascii: "?")),
            mayContainParameter(target.utf8[question...])
        else { return (target, nil) }
        let query = target[target.index(after: question)...]
        var kept: [Substring] = []
        var view: [Substring] = []
        // Empty parameters are kept: the origin's URL is the player's without ours (a signature may cover `&&`).
        for parameter in query.split(separator: "&", omittingEmptySubsequences: false) {
            if parameter.hasPrefix("hlscache.") { view.append(parameter) } else { kept.append(parameter) }
        }
        guard !view.isEmpty else { return (target, nil) }
        let path = target[..<question]
        let rest = kept.allSatisfy(\.isEmpty) ? "" : "?" + kept.joined(separator: "&")
        return (path + rest, view.joined(separator: "&"))
    }

    /// Whether `hlscache.` occurs in the bytes.
    private static func mayContainParameter(_ bytes: Substring.UTF8View) -> Bool {
        let needle = Array("hlscache.".utf8)
        var matched = 0
        for byte in bytes {
            if byte == needle[matched] {
                matched += 1
                if matched == needle.count { return true }
            } else {
                matched = byte == needle[0] ? 1 : 0
            }
        }
        return false
    }
}
