/// The one spelling of an origin URL that cache keys use: `HTTP://CDN.Example:80//a//b.ts` and
/// `http://cdn.example/a/b.ts` are one object. Scheme and host are lowercased, a port that is the scheme's default is
/// dropped, and runs of `/` in the path become one. The query, the fragment and the path's case are left alone (the
/// origin decides what those mean). A URL already in that form (nearly every one) is returned as it is, after one
/// pass over its bytes.
package enum URLKeyForm {
    /// `url` in the key spelling; anything that is not `scheme://authority…` is returned unchanged.
    package static func normalized(_ url: String) -> String {
        let bytes = Array(url.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0, colon + 2 < bytes.count,
            bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
        else { return url }
        let authorityStart = colon + 3
        var authorityEnd = authorityStart
        while authorityEnd < bytes.count, !Self.endsAuthority(bytes[authorityEnd]) { authorityEnd += 1 }
        var pathEnd = authorityEnd
        while pathEnd < bytes.count, bytes[pathEnd] != UInt8(ascii: "?"), bytes[pathEnd] != UInt8(ascii: "#") {
            pathEnd += 1
        }
        let scheme = bytes[..<colon]
        // The host's part of the authority (after userinfo).
        let at = bytes[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@"))
        let hostStart = at.map { $0 + 1 } ?? authorityStart
        var hostEnd = authorityEnd
        var portText: ArraySlice<UInt8> = []
        if let portColon = bytes[hostStart..<authorityEnd].lastIndex(of: UInt8(ascii: ":")),
            !bytes[portColon..<authorityEnd].contains(UInt8(ascii: "]"))
        {
            hostEnd = portColon
            portText = bytes[(portColon + 1)..<authorityEnd]
        }
        let lowerScheme = scheme.map(Self.lowercased)
        let defaultPort: [UInt8] = lowerScheme.elementsEqual("https".utf8) ? Array("443".utf8) : Array("80".utf8)
        let dropsPort = portText.isEmpty ? hostEnd < authorityEnd : portText.elementsEqual(defaultPort)
        let hasUpper = bytes[..<hostEnd].contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
        var emptySegment = false
        if pathEnd > authorityEnd + 1 {
            for index in (authorityEnd + 1)..<pathEnd
            where bytes[index] == UInt8(ascii: "/") && bytes[index - 1] == UInt8(ascii: "/") {
                emptySegment = true
                break
            }
        }
        guard hasUpper || dropsPort || emptySegment else { return url }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        output += lowerScheme
        output += bytes[colon..<hostStart]
        output += bytes[hostStart..<hostEnd].map(Self.lowercased)
        if !dropsPort { output += bytes[hostEnd..<authorityEnd] }
        for index in authorityEnd..<pathEnd
        where !(bytes[index] == UInt8(ascii: "/") && output.last == UInt8(ascii: "/") && index > authorityEnd) {
            output.append(bytes[index])
        }
        output += bytes[pathEnd...]
        return String(decoding: output, as: UTF8.self)
    }

    private static func endsAuthority(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
