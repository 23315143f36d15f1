import Foundation

#if canImport(FoundationXML)
import FoundationXML
#endif

/// An MPD read with Foundation's `XMLParser` and resolved with Foundation's `URL`, written apart from the code under
/// test: what a player would fetch, place by place.
struct IndependentMPDReader {
    /// One element: its qualified name, attributes and text.
    final class Node {
        let name: String
        let attributes: [String: String]
        var text = ""
        var children: [Node] = []

        init(name: String, attributes: [String: String]) {
            self.name = name
            self.attributes = attributes
        }
    }

    /// The URL attributes of each element, from ISO/IEC 23009-1.
    static let urlAttributes: [String: Set<String>] = [
        "SegmentTemplate": ["media", "initialization", "index", "bitstreamSwitching"],
        "SegmentURL": ["media", "index"],
        "Initialization": ["sourceURL"],
        "RepresentationIndex": ["sourceURL"],
        "BitstreamSwitching": ["sourceURL"],
    ]
    /// Elements whose text is a URL.
    static let urlTexts: Set<String> = ["BaseURL", "Location", "PatchLocation", "ContentSteering"]

    /// Parses `bytes` into a tree.
    static func parse(_ bytes: [UInt8]) -> Node? {
        let delegate = TreeBuilder()
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = delegate
        guard parser.parse() else { return nil }
        return delegate.root
    }

    /// Every URL place of the document, in document order, as (description, the absolute URL a player fetches);
    /// a player picks the first `BaseURL` of a level, as the rewriter's rule does not depend on which.
    static func places(_ root: Node, documentURL: String) -> [(String, String)] {
        var result: [(String, String)] = []
        walk(root, base: documentURL, path: "MPD", into: &result)
        return result
    }

    /// The non-URL content of the document: every attribute and text that is not a URL place, in order.
    static func rest(_ root: Node) -> [String] {
        var result: [String] = []
        func visit(_ node: Node, _ path: String) {
            for (name, value) in node.attributes.sorted(by: { $0.key < $1.key }) {
                if urlAttributes[local(node.name)]?.contains(name) == true || name == "xlink:href" { continue }
                result.append("\(path)@\(name)=\(value)")
            }
            let text = node.text.trimmingCharacters(in: .whitespacesAndNewlines)
            if !urlTexts.contains(local(node.name)) || node.name.contains(":") {
                if !text.isEmpty { result.append("\(path)#text=\(text)") }
            }
            for (index, child) in node.children.enumerated() { visit(child, "\(path)/\(child.name)[\(index)]") }
        }
        visit(root, root.name)
        return result
    }

    private static func local(_ name: String) -> String { String(name.split(separator: ":").last ?? "") }

    private static func resolve(_ reference: String, _ base: String) -> String {
        URL(string: reference, relativeTo: URL(string: base))?.absoluteString ?? "unresolvable:\(reference)"
    }

    private static func walk(_ node: Node, base: String, path: String, into result: inout [(String, String)]) {
        if let href = node.attributes["xlink:href"] { result.append(("\(path)@xlink:href", resolve(href, base))) }
        let dash = node.children.filter { !$0.name.contains(":") }
        let baseURLs = dash.filter { $0.name == "BaseURL" }.map {
            resolve($0.text.trimmingCharacters(in: .whitespacesAndNewlines), base)
        }
        for (index, url) in baseURLs.enumerated() { result.append(("\(path)/BaseURL[\(index)]", url)) }
        let here = baseURLs.first ?? base
        for name in (urlAttributes[node.name] ?? []).sorted() {
            if let value = node.attributes[name] { result.append(("\(path)@\(name)", resolve(value, here))) }
        }
        for (index, child) in dash.enumerated() where child.name != "BaseURL" {
            if child.name == "UTCTiming" || child.name == "ContentProtection" { continue }
            if urlTexts.contains(child.name) {
                let text = child.text.trimmingCharacters(in: .whitespacesAndNewlines)
                result.append(("\(path)/\(child.name)[\(index)]", resolve(text, here)))
                continue
            }
            walk(child, base: here, path: "\(path)/\(child.name)[\(index)]", into: &result)
        }
    }

    private final class TreeBuilder: NSObject, XMLParserDelegate {
        var root: Node?
        private var stack: [Node] = []

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            let node = Node(name: elementName, attributes: attributes)
            if let parent = stack.last { parent.children.append(node) } else { root = node }
            stack.append(node)
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
        ) {
            stack.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            stack.last?.text += string
        }
    }
}
