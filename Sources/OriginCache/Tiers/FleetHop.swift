/// How hlscache nodes recognise one another on the wire: the `Via` element a node adds to the requests it sends to
/// another node (`1.1 <node-name> (hlscache)`), and the names such a header carries.
///
/// A node answers a request whose `Via` names it with `508 Loop Detected`, and answers manifests to a request whose
/// `Via` names any hlscache node as the origin sent them (the node that asked validates and rewrites them itself).
public enum FleetHop {
    /// The comment that marks a `Via` element as an hlscache node's.
    static let marker = "(hlscache)"

    /// The header a node's `/healthz` answers with its name, so that its children learn who their parent is.
    public static let nodeHeader = "X-HLSCache-Node"
    /// The header of `/healthz` that names the node's own parent, once it knows it: a child that finds its own name
    /// there is its parent's parent (a loop of `--parent`s).
    public static let parentNodeHeader = "X-HLSCache-Parent-Node"

    /// The most hlscache nodes a request may have passed through; past it the request is refused as a loop.
    public static let maxHops = 8

    /// The hlscache nodes the request being answered passed through (from its `Via`), in order.
    ///
    /// The server binds it around the fetches it makes for a request; fills started by them (tasks that inherit it)
    /// send it on to the parent ahead of this node's own element, so a request that comes back round a loop of
    /// parents names the node it left from and is refused there, instead of joining its own fill.
    @TaskLocal public static var incoming: [String] = []

    /// The `Via` element of the node called `name`.
    /// - Parameter name: the node's name (``isValidName(_:)``).
    /// - Returns: `1.1 <name> (hlscache)`.
    public static func viaElement(nodeName name: String) -> String { "1.1 \(name) \(marker)" }

    /// The `Via` header node `name` sends with a request it makes for a request that came through
    /// ``incoming``'s nodes: theirs, then its own. A request that comes back to a node round any loop (a parent, an
    /// origin that redirects to it, a target naming it) names it there, and is refused with 508.
    /// - Parameter name: this node's name.
    /// - Returns: the header's name and value.
    public static func via(nodeName name: String) -> (name: String, value: String) {
        ("Via", (incoming.suffix(maxHops) + [name]).map(viaElement).joined(separator: ", "))
    }

    /// The hlscache node names in a `Via` header, in the order the hops were made; other proxies' elements are
    /// left out.
    /// - Parameter via: the header's value (elements separated by commas).
    /// - Returns: the names, empty when no element is an hlscache node's.
    public static func nodeNames(inVia via: String) -> [String] {
        via.split(separator: ",").compactMap { element in
            let words = element.split(separator: " ", omittingEmptySubsequences: true)
            guard words.count == 3, words[2] == marker else { return nil }
            return String(words[1])
        }
    }

    /// Whether `name` can be a node's name: 1 to 64 letters, digits, `.`, `-` or `_` (so that it stays one token of
    /// a `Via` element).
    /// - Parameter name: the proposed name.
    /// - Returns: whether it is usable.
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// A name for a node that was given none: `hlscache-` and eight random hexadecimal digits, new each start, so
    /// that nodes on one host never share a name.
    public static func randomNodeName() -> String {
        let digits = Array("0123456789abcdef")
        return "hlscache-" + String((0..<8).map { _ in digits[Int.random(in: 0..<16)] })
    }
}
