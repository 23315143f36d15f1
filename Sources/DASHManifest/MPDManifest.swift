import CLibXML2
import ManifestURLs

/// MPEG-DASH manifests: parsed with libxml2 (no network, no entities, no DTD), read into the ``MPD`` model, and
/// rewritten so that every URL a player fetches comes back to hlscache.
public enum MPDManifest {
    private static let initialized: Void = { xmlInitParser() }()

    /// The `Content-Type` MPDs are stored and served with.
    public static let contentType = "application/dash+xml"

    /// Parses an MPD.
    /// - Parameters:
    ///   - bytes: the document.
    ///   - url: where it was fetched from (after redirects), for messages.
    /// - Returns: the model.
    /// - Throws: ``MPDError`` for XML that is not well-formed, a document type declaration, a root that is not
    ///   `MPD`, a missing required attribute or a value out of range.
    public static func parse(_ bytes: [UInt8], url: String) throws(MPDError) -> MPD {
        _ = initialized
        let tree = try XMLTree(parsing: bytes, url: url)
        guard let root = tree.root else { throw MPDError(.notWellFormed, "no root element") }
        return try MPDReader.read(XMLElement(node: root))
    }

    /// Parses an MPD and rewrites every URL place with `mapping` (see ``MPDRewriter`` for the places).
    /// - Parameters:
    ///   - bytes: the document.
    ///   - url: where it was fetched from (after redirects): the base of its relative references.
    ///   - mapping: how a resolved URL is written (the proxy form, or the reverse mode's paths).
    ///   - view: what of it players are shown (``MPDView``); all of it by default.
    /// - Returns: the rewritten document (UTF-8, with an XML declaration) and the model (of what the view shows).
    /// - Throws: ``MPDError``, as ``parse(_:url:)``; `tooLarge` when a URL written would be longer than
    ///   `RewriteLimits.maxURIBytes` or the output larger than `RewriteLimits` allows a playlist of that size;
    ///   `view` when the view leaves nothing to play.
    public static func rewrite(
        _ bytes: [UInt8], url: String, mapping: URIMapping, view: ManifestView = ManifestView()
    ) throws(MPDError) -> (bytes: [UInt8], mpd: MPD) {
        _ = initialized
        let tree = try XMLTree(parsing: bytes, url: url)
        guard let root = tree.root else { throw MPDError(.notWellFormed, "no root element") }
        let element = XMLElement(node: root)
        // Read whole first: a view of an MPD that does not read is not shown.
        _ = try MPDReader.read(element)
        if !view.isEmpty {
            do throws(ManifestViewError) {
                try MPDView.apply(view, to: element)
            } catch {
                throw MPDError(view: error)
            }
        }
        let mpd = try MPDReader.read(element)
        var rewriter = MPDRewriter(mapping: mapping, inputBytes: bytes.count)
        try rewriter.rewrite(element, base: url, underBaseURL: false)
        return (tree.serialized(), mpd)
    }

    /// Whether a body's start looks like an MPD: an `<MPD` root after the XML declaration, comments and blanks.
    /// - Parameter firstBytes: the start of the body.
    public static func looksLikeMPD(_ firstBytes: [UInt8]) -> Bool {
        var bytes = firstBytes[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        while let start = bytes.firstIndex(of: UInt8(ascii: "<")) {
            let rest = bytes[start...]
            if rest.starts(with: Array("<?".utf8)) || rest.starts(with: Array("<!--".utf8)) {
                guard let end = rest.firstIndex(of: UInt8(ascii: ">")) else { return false }
                bytes = bytes[(end + 1)...]
                continue
            }
            let name = rest.dropFirst().prefix { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: ">") && $0 > 32 }
            let local = name.split(separator: UInt8(ascii: ":")).last ?? name[...]
            return local.elementsEqual(Array("MPD".utf8))
        }
        return false
    }
}
