import CLibXML2

/// An MPD's XML tree, parsed by libxml2 and owned by this object: no network, no entities substituted, no DTD, and
/// a document type declaration refused before libxml2 sees the bytes. Not shared between threads.
final class XMLTree {
    let document: xmlDocPtr

    /// The largest document parsed.
    static let maxBytes = 64 << 20

    /// Parses `bytes`.
    /// - Throws: ``MPDError`` when the bytes are too many, declare a document type, have more elements or attributes
    ///   than ``XMLShape`` allows, or are not well-formed XML.
    init(parsing bytes: [UInt8], url: String) throws(MPDError) {
        guard bytes.count <= Self.maxBytes else {
            throw MPDError(.tooLarge, "MPD of \(bytes.count) bytes is larger than \(Self.maxBytes)")
        }
        if let line = Self.documentTypeLine(bytes) {
            throw MPDError(.documentType, "a document type declaration is not allowed in an MPD", line: line)
        }
        if let refusal = XMLShape(bytes).refusal() { throw refusal }
        var reason = [CChar](repeating: 0, count: 256)
        var line: Int32 = 0
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                hlscache_xml_parse(chars.baseAddress, Int32(chars.count), url, &reason, Int32(reason.count), &line)
            }
        }
        guard let parsed else {
            let text = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw MPDError(
                .notWellFormed, "not well-formed XML: \(text.isEmpty ? "empty document" : text)", line: Int(line))
        }
        document = parsed
    }

    deinit { xmlFreeDoc(document) }

    /// The root element.
    var root: xmlNodePtr? { xmlDocGetRootElement(document) }

    /// The document as UTF-8 XML, with an XML declaration.
    func serialized() -> [UInt8] {
        var length: Int32 = 0
        guard let memory = hlscache_xml_dump(document, &length) else { return [] }
        defer { hlscache_xml_free(memory) }
        return Array(UnsafeBufferPointer(start: memory, count: Int(length)))
    }

    /// The line of a `<!DOCTYPE` in the prolog (before the root element), if there is one. Scanned by hand so that
    /// no entity declaration ever reaches libxml2.
    static func documentTypeLine(_ bytes: [UInt8]) -> Int? {
        let marker = Array("<!DOCTYPE".utf8)
        var index = 0
        var line = 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") { line += 1 }
            if byte == UInt8(ascii: "<"), index + 1 < bytes.count {
                let next = bytes[index + 1]
                if next == UInt8(ascii: "!"), bytes[index...].starts(with: marker) { return line }
                if next == UInt8(ascii: "!") || next == UInt8(ascii: "?") {
                    // A comment or processing instruction of the prolog: skip to its end.
                    let end: [UInt8] = next == UInt8(ascii: "?") ? Array("?>".utf8) : Array("-->".utf8)
                    guard let close = find(end, in: bytes, from: index + 2) else { return nil }
                    line += bytes[index..<close].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
                    index = close + end.count
                    continue
                }
                return nil  // the root element: no declaration before it
            }
            index += 1
        }
        return nil
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        for index in start...(bytes.count - needle.count) where bytes[index] == needle[0] {
            if bytes[index..<(index + needle.count)].elementsEqual(needle) { return index }
        }
        return nil
    }
}

/// Reading and writing one element of an ``XMLTree``.
struct XMLElement {
    let node: xmlNodePtr

    /// The DASH MPD namespace.
    static let dashNamespace = "urn:mpeg:dash:schema:mpd:2011"
    /// The XLink namespace (`xlink:href`).
    static let xlinkNamespace = "http://www.w3.org/1999/xlink"

    /// The local name.
    var name: String { String(cString: node.pointee.name) }

    /// The namespace URI, if the element has one.
    var namespace: String? { node.pointee.ns.flatMap { $0.pointee.href }.map { String(cString: $0) } }

    /// Whether it is a DASH element (the MPD namespace, or no namespace).
    var isDASH: Bool { namespace == nil || namespace == Self.dashNamespace }

    /// Its line in the document.
    var line: Int { Int(xmlGetLineNo(node)) }

    /// The child elements, in order.
    var children: [XMLElement] {
        var result: [XMLElement] = []
        var child = node.pointee.children
        while let current = child {
            if current.pointee.type == XML_ELEMENT_NODE { result.append(XMLElement(node: current)) }
            child = current.pointee.next
        }
        return result
    }

    /// The value of an attribute in no namespace.
    func attribute(_ name: String) -> String? {
        guard let value = xmlGetNoNsProp(node, name) else { return nil }
        defer { hlscache_xml_free(value) }
        return String(cString: value)
    }

    /// Sets an attribute in no namespace.
    func setAttribute(_ name: String, _ value: String) {
        xmlSetProp(node, name, value)
    }

    /// The value of an attribute in `namespace`.
    func attribute(_ name: String, namespace: String) -> String? {
        guard let value = xmlGetNsProp(node, name, namespace) else { return nil }
        defer { hlscache_xml_free(value) }
        return String(cString: value)
    }

    /// Sets an existing attribute in `namespace`.
    func setAttribute(_ name: String, namespace: String, _ value: String) {
        guard let attribute = xmlHasNsProp(node, name, namespace), let ns = attribute.pointee.ns else { return }
        xmlSetNsProp(node, ns, name, value)
    }

    /// The text content.
    var text: String {
        guard let content = xmlNodeGetContent(node) else { return "" }
        defer { hlscache_xml_free(content) }
        return String(cString: content)
    }

    /// Takes the element out of its document and frees it (with its children): no handle of it may be used after.
    func remove() {
        xmlUnlinkNode(node)
        xmlFreeNode(node)
    }

    /// Adds a child element `name` in the element's own namespace, with `attributes` in order; returns it.
    @discardableResult
    func addChild(_ name: String, attributes: [(String, String)]) -> XMLElement {
        let child = XMLElement(node: xmlNewChild(node, node.pointee.ns, name, nil))
        for (attribute, value) in attributes { child.setAttribute(attribute, value) }
        return child
    }

    /// Removes an attribute in no namespace, if present.
    func removeAttribute(_ name: String) {
        xmlUnsetProp(node, name)
    }

    /// Replaces the content with one text node (no entity is interpreted).
    func setText(_ value: String) {
        xmlNodeSetContent(node, nil)
        xmlAddChild(node, xmlNewText(value))
    }
}
