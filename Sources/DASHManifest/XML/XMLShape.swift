/// A byte scan of an XML document before libxml2 sees it: how many elements it has and the most attributes one of
/// them has. libxml2 checks an element's attributes for duplicates pairwise (a single element with 100,000
/// attributes costs it half a minute), and keeps every element in memory: both are bounded here first.
struct XMLShape {
    /// The most elements an MPD may have.
    static let maxElements = 500_000
    /// The most attributes one element may have.
    static let maxAttributesPerElement = 256

    /// Start tags seen (a `<` followed by a name character; comments, CDATA and processing instructions may add
    /// some: the count errs on the high side).
    var elements = 0
    /// The most attributes (`=` outside quotes) of one tag.
    var mostAttributes = 0
    /// The line of that tag.
    var mostAttributesLine = 1
    /// Whether a NUL byte occurs: never in UTF-8 XML, always in UTF-16 or UTF-32, whose markup the scan cannot read.
    var hasNUL = false

    /// Scans `bytes` once.
    init(_ bytes: [UInt8]) {
        var line = 1
        var inTag = false
        var quote: UInt8 = 0
        var attributes = 0
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") { line += 1 }
            if byte == 0 { hasNUL = true }
            if inTag {
                if quote != 0 {
                    if byte == quote { quote = 0 }
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                    quote = byte
                } else if byte == UInt8(ascii: "=") {
                    attributes += 1
                    if attributes > mostAttributes {
                        mostAttributes = attributes
                        mostAttributesLine = line
                    }
                } else if byte == UInt8(ascii: ">") {
                    inTag = false
                }
            } else if byte == UInt8(ascii: "<"), index + 1 < count, Self.isNameStart(bytes[index + 1]) {
                elements += 1
                inTag = true
                attributes = 0
            }
            index += 1
        }
    }

    /// Why the document is refused, if it is.
    func refusal() -> MPDError? {
        if hasNUL {
            return MPDError(.notWellFormed, "an MPD must be UTF-8 (a NUL byte: UTF-16 or UTF-32)")
        }
        if elements > Self.maxElements {
            return MPDError(.tooLarge, "MPD has more than \(Self.maxElements) elements")
        }
        if mostAttributes > Self.maxAttributesPerElement {
            return MPDError(
                .tooLarge, "an element has more than \(Self.maxAttributesPerElement) attributes",
                line: mostAttributesLine)
        }
        return nil
    }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"),
            UInt8(ascii: ":"), 0x80...0xFF:
            return true
        default:
            return false
        }
    }
}
