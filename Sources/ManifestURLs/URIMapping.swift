/// How a resolved absolute `http`/`https` URL is turned into the URI written to the rewritten playlist.
///
/// The two built-in mappings are reversible pure functions: see ``ProxyURL`` and ``CustomSchemeURL``.
public struct URIMapping: Sendable {
    enum Storage: Sendable {
        case proxy(base: [UInt8])
        case customScheme
        case function(@Sendable (String) -> String?)
    }

    let storage: Storage

    /// The proxy URL form: `https://cdn/a.m3u8` → `<base>/o/https/cdn/a.m3u8`.
    /// - Parameter base: the front's base URL (`http://host:8080`), or empty for absolute-path URLs.
    public static func proxy(base: String) -> URIMapping {
        URIMapping(storage: .proxy(base: Array(ProxyURL.normalizedBase(base).utf8)))
    }

    /// The custom-scheme form for AVPlayer resource loaders: `https://cdn/a.m3u8` → `hlscache-https://cdn/a.m3u8`.
    public static let customScheme = URIMapping(storage: .customScheme)

    /// Any other mapping, given the resolved absolute URL; returning `nil` leaves the place untouched.
    /// - Parameter transform: the mapping function.
    public static func custom(_ transform: @escaping @Sendable (String) -> String?) -> URIMapping {
        URIMapping(storage: .function(transform))
    }

    /// Applies the mapping to one absolute `http`/`https` URL.
    /// - Parameter url: the resolved URL.
    /// - Returns: the mapped URI, or `nil` when the mapping leaves it alone.
    public func map(_ url: String) -> String? {
        switch storage {
        case .proxy(let base): return ProxyURL.make(origin: url, base: String(decoding: base, as: UTF8.self))
        case .customScheme: return CustomSchemeURL.make(origin: url)
        case .function(let transform): return transform(url)
        }
    }

    /// Resolves `reference` against `base` and appends its mapped form to `output`.
    ///
    /// The built-in mappings are a prefix and a scheme separator around the resolved URL, so they resolve straight
    /// into `output`; only a custom function needs the URL on its own, in `scratch`.
    /// - Returns: false when the target is not an `http`/`https` URL or the mapping leaves it alone; `output` is
    ///   then as it was.
    package func append(
        resolving reference: UnsafeBufferPointer<UInt8>, against base: BaseURL, scratch: inout ByteWriter,
        to output: inout ByteWriter
    ) -> Bool {
        let start = output.count
        switch storage {
        case .proxy(let prefix):
            output.append(prefix)
            output.append(Literal.proxyPrefix)
            guard URLResolver.resolve(reference, against: base, into: &output, joining: .proxyPath) != nil else {
                output.truncate(to: start)
                return false
            }
            return true
        case .customScheme:
            output.append(Literal.customPrefix)
            guard URLResolver.resolve(reference, against: base, into: &output) != nil else {
                output.truncate(to: start)
                return false
            }
            return true
        case .function(let transform):
            scratch.removeAll()
            guard let layout = URLResolver.resolve(reference, against: base, into: &scratch) else { return false }
            let url = String(
                decoding: UnsafeBufferPointer(rebasing: scratch.bytes[layout.start..<layout.rest.upperBound]),
                as: UTF8.self)
            guard let mapped = transform(url) else { return false }
            output.append(Array(mapped.utf8))
            return true
        }
    }
}
