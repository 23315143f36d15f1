/// Removes secrets from text that leaves the process (log lines, the status page): the values of query
/// parameters (signed-URL tokens, signatures) and the userinfo of URLs (`user:password@`).
///
/// Names stay, so a line still says which parameters a URL had: `/o/https/cdn/a.ts?token=***&sig=***`. The LL-HLS
/// parameters (`_HLS_msn`, `_HLS_part`, `_HLS_skip`) are not secrets and keep their values.
enum SecretRedaction {
    /// What replaces a secret.
    static let mask = "***"

    /// `text` with every query value and URL userinfo masked.
    /// - Parameter text: a URL, a request target, or a message that contains some.
    /// - Returns: `text` itself when it holds neither `?` nor `@`.
    static func redact(_ text: String) -> String {
        let utf8 = text.utf8
        guard utf8.contains(UInt8(ascii: "?")) || utf8.contains(UInt8(ascii: "@")) else { return text }
        let bytes = Array(utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "?") {
                output.append(bytes[index])
                index = redactQuery(bytes, from: index + 1, into: &output)
            } else if let authorityStart = authorityStart(bytes, at: index) {
                output.append(contentsOf: bytes[index..<authorityStart])
                index = redactUserInfo(bytes, from: authorityStart, into: &output)
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Where an authority starts when a URL (`scheme://`) or a forward-mode path (`/o/scheme/`) starts at `index`.
    private static func authorityStart(_ bytes: [UInt8], at index: Int) -> Int? {
        if bytes[index] == UInt8(ascii: ":"), index + 2 < bytes.count, bytes[index + 1] == UInt8(ascii: "/"),
            bytes[index + 2] == UInt8(ascii: "/")
        {
            return index + 3
        }
        let prefix = Array("/o/".utf8)
        guard index + prefix.count < bytes.count, Array(bytes[index..<(index + prefix.count)]) == prefix,
            let slash = bytes[(index + prefix.count)...].firstIndex(of: UInt8(ascii: "/")),
            slash - index - prefix.count <= 5
        else { return nil }
        return slash + 1
    }

    /// Copies an authority, with what stands before its last `@` masked.
    private static func redactUserInfo(_ bytes: [UInt8], from start: Int, into output: inout [UInt8]) -> Int {
        var end = start
        while end < bytes.count, !isAuthorityEnd(bytes[end]) { end += 1 }
        if let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")) {
            output.append(contentsOf: mask.utf8)
            output.append(contentsOf: bytes[at..<end])
        } else {
            output.append(contentsOf: bytes[start..<end])
        }
        return end
    }

    /// Copies a query with each parameter's value masked, up to its end (a fragment, a blank, a quote or the end
    /// of the text).
    private static func redactQuery(_ bytes: [UInt8], from start: Int, into output: inout [UInt8]) -> Int {
        var index = start
        while index < bytes.count, !isQueryEnd(bytes[index]) {
            var end = index
            while end < bytes.count, bytes[end] != UInt8(ascii: "&"), !isQueryEnd(bytes[end]) { end += 1 }
            let pair = bytes[index..<end]
            if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
                output.append(contentsOf: bytes[index...equals])
                let name = bytes[index..<equals]
                if name.starts(with: "_HLS_".utf8) {
                    output.append(contentsOf: bytes[(equals + 1)..<end])
                } else if equals + 1 < end {
                    output.append(contentsOf: mask.utf8)
                }
            } else if !pair.isEmpty {
                output.append(contentsOf: mask.utf8)
            }
            index = end
            if index < bytes.count, bytes[index] == UInt8(ascii: "&") {
                output.append(bytes[index])
                index += 1
            }
        }
        return index
    }

    private static func isQueryEnd(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "#") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\"")
            || byte == UInt8(ascii: "'") || byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte < 0x20
    }

    private static func isAuthorityEnd(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || isQueryEnd(byte)
    }
}
