/// The components of an absolute base URL, as byte ranges of `bytes`.
package struct BaseURL: Sendable {
    package let bytes: [UInt8]
    let scheme: Range<Int>
    let hasAuthority: Bool
    let authority: Range<Int>
    let path: Range<Int>
    let query: Range<Int>?
    /// The path up to and including its last `/`, where relative references are merged.
    let directory: Range<Int>
    let directoryHasDotSegment: Bool

    /// Parses an absolute URL (`scheme:` required); returns `nil` for a relative one.
    package init?(_ string: String) {
        let bytes = Array(string.utf8)
        let parts = bytes.withUnsafeBufferPointer { URLReference($0, 0..<$0.count) }
        guard let scheme = parts.scheme else { return nil }
        self.bytes = bytes
        self.scheme = scheme
        self.hasAuthority = parts.authority != nil
        self.authority = parts.authority ?? scheme.upperBound..<scheme.upperBound
        self.path = parts.path
        self.query = parts.query
        var directoryEnd = parts.path.upperBound
        while directoryEnd > parts.path.lowerBound, bytes[directoryEnd - 1] != ASCII.slash { directoryEnd -= 1 }
        self.directory = parts.path.lowerBound..<directoryEnd
        self.directoryHasDotSegment = bytes.withUnsafeBufferPointer {
            DotSegments.hasDotSegment($0, parts.path.lowerBound..<directoryEnd)
        }
    }

    /// The query string of the URL, without `?`.
    package var queryString: String? { query.map { String(decoding: bytes[$0], as: UTF8.self) } }
}

/// The components of a URI reference (RFC 3986 section 4.1), as ranges of its bytes.
struct URLReference {
    var scheme: Range<Int>?
    /// The authority without the leading `//`.
    var authority: Range<Int>?
    var path: Range<Int>
    /// The query without `?`.
    var query: Range<Int>?
    /// The fragment without `#`.
    var fragment: Range<Int>?

    init(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        var index = range.lowerBound
        let end = range.upperBound
        scheme = nil
        if index < end, ASCII.isAlpha(bytes[index]) {
            // The scheme's characters end at the first `:` at the latest, so no search for it is needed.
            var probe = index + 1
            while probe < end {
                let byte = bytes[probe]
                guard
                    ASCII.isAlpha(byte) || ASCII.isDigit(byte) || byte == UInt8(ascii: "+")
                        || byte == UInt8(ascii: "-") || byte == ASCII.dot
                else { break }
                probe += 1
            }
            if probe < end, bytes[probe] == ASCII.colon {
                scheme = index..<probe
                index = probe + 1
            }
        }
        authority = nil
        if index + 1 < end, bytes[index] == ASCII.slash, bytes[index + 1] == ASCII.slash {
            var authorityEnd = index + 2
            while authorityEnd < end {
                let byte = bytes[authorityEnd]
                if byte == ASCII.slash || byte == ASCII.question || byte == ASCII.numberSign { break }
                authorityEnd += 1
            }
            authority = (index + 2)..<authorityEnd
            index = authorityEnd
        }
        let fragmentStart = bytes.index(of: ASCII.numberSign, in: index..<end)
        let pathEnd = bytes.index(of: ASCII.question, in: index..<fragmentStart)
        path = index..<pathEnd
        index = pathEnd
        query = nil
        if index < fragmentStart {
            query = (index + 1)..<fragmentStart
            index = fragmentStart
        }
        fragment = index < end ? (index + 1)..<end : nil
    }
}

/// Where the parts of a resolved absolute URL lie in the output buffer.
package struct ResolvedLayout {
    /// Start of the URL in the buffer.
    package var start: Int
    /// The scheme, without `:`.
    package var scheme: Range<Int>
    /// The authority, without `//`.
    package var authority: Range<Int>
    /// Path, query and fragment.
    package var rest: Range<Int>
}

/// RFC 3986 section 5.2 reference resolution, writing the target URL into a byte buffer.
package enum URLResolver {
    /// What is written between the scheme and the authority.
    package enum SchemeJoin {
        /// `://`, the URL itself.
        case url
        /// `/`, the URL's form in a proxy path (``ProxyURL``).
        case proxyPath
    }

    /// Resolves `reference` against `base`, appending the target URL to `output`.
    /// - Parameter join: what goes between the scheme and the authority; `.url` unless writing a proxy path.
    /// - Returns: the layout of the target, or `nil` when the target is not an `http`/`https` URL with an
    ///   authority (such places are left untouched); `output` is then restored.
    package static func resolve(
        _ reference: UnsafeBufferPointer<UInt8>,
        against base: BaseURL,
        into output: inout ByteWriter,
        joining join: SchemeJoin = .url
    ) -> ResolvedLayout? {
        let start = output.count
        var ref = URLReference(reference, 0..<reference.count)
        let baseScheme = base.scheme
        if let scheme = ref.scheme, ref.authority == nil,
            base.bytes.withUnsafeBufferPointer({ equalsIgnoringCase(reference, scheme, $0, baseScheme) })
        {
            ref.scheme = nil  // non-strict: `http:a.ts` against an http base is relative
        }
        let layout: ResolvedLayout? = base.bytes.withUnsafeBufferPointer { baseBytes in
            if let scheme = ref.scheme {
                guard isHTTP(reference, scheme), let authority = ref.authority else { return nil }
                output.append(reference, scheme)
                appendJoin(join, to: &output)
                let authorityStart = output.count
                output.append(reference, authority)
                let authorityEnd = output.count
                DotSegments.append(reference, ref.path, to: &output)
                appendQueryAndFragment(reference, ref, to: &output)
                return ResolvedLayout(
                    start: start, scheme: start..<(start + scheme.count), authority: authorityStart..<authorityEnd,
                    rest: authorityEnd..<output.count)
            }
            guard isHTTP(baseBytes, baseScheme), base.hasAuthority || ref.authority != nil else { return nil }
            output.append(baseBytes, baseScheme)
            appendJoin(join, to: &output)
            let authorityStart = output.count
            if let authority = ref.authority {
                output.append(reference, authority)
                let authorityEnd = output.count
                DotSegments.append(reference, ref.path, to: &output)
                appendQueryAndFragment(reference, ref, to: &output)
                return ResolvedLayout(
                    start: start, scheme: start..<(start + baseScheme.count),
                    authority: authorityStart..<authorityEnd, rest: authorityEnd..<output.count)
            }
            output.append(baseBytes, base.authority)
            let authorityEnd = output.count
            if ref.path.isEmpty {
                output.append(baseBytes, base.path)
                if let query = ref.query {
                    output.append(ASCII.question)
                    output.append(reference, query)
                } else if let query = base.query {
                    output.append(ASCII.question)
                    output.append(baseBytes, query)
                }
            } else if reference[ref.path.lowerBound] == ASCII.slash {
                DotSegments.append(reference, ref.path, to: &output)
                appendQuery(reference, ref, to: &output)
            } else {
                DotSegments.appendMerged(
                    base: baseBytes, directory: base.directory, hasAuthority: base.hasAuthority,
                    baseHasDotSegment: base.directoryHasDotSegment,
                    reference: reference, ref.path, to: &output)
                appendQuery(reference, ref, to: &output)
            }
            if let fragment = ref.fragment {
                output.append(ASCII.numberSign)
                output.append(reference, fragment)
            }
            return ResolvedLayout(
                start: start, scheme: start..<(start + baseScheme.count), authority: authorityStart..<authorityEnd,
                rest: authorityEnd..<output.count)
        }
        if layout == nil { output.truncate(to: start) }
        return layout
    }

    @inline(__always)
    private static func appendJoin(_ join: SchemeJoin, to output: inout ByteWriter) {
        switch join {
        case .url: output.append(Literal.schemeSeparator)
        case .proxyPath: output.append(ASCII.slash)
        }
    }

    private static func appendQuery(
        _ bytes: UnsafeBufferPointer<UInt8>, _ ref: URLReference, to output: inout ByteWriter
    ) {
        if let query = ref.query {
            output.append(ASCII.question)
            output.append(bytes, query)
        }
    }

    private static func appendQueryAndFragment(
        _ bytes: UnsafeBufferPointer<UInt8>, _ ref: URLReference, to output: inout ByteWriter
    ) {
        appendQuery(bytes, ref, to: &output)
        if let fragment = ref.fragment {
            output.append(ASCII.numberSign)
            output.append(bytes, fragment)
        }
    }

    /// Whether the scheme is `http` or `https`, in any case.
    static func isHTTP(_ bytes: UnsafeBufferPointer<UInt8>, _ scheme: Range<Int>) -> Bool {
        let count = scheme.count
        guard count == 4 || count == 5 else { return false }
        let lower = scheme.lowerBound
        guard bytes[lower] | 0x20 == UInt8(ascii: "h"), bytes[lower + 1] | 0x20 == UInt8(ascii: "t"),
            bytes[lower + 2] | 0x20 == UInt8(ascii: "t"), bytes[lower + 3] | 0x20 == UInt8(ascii: "p")
        else { return false }
        return count == 4 || bytes[lower + 4] | 0x20 == UInt8(ascii: "s")
    }

    private static func equalsIgnoringCase(
        _ lhs: UnsafeBufferPointer<UInt8>, _ lhsRange: Range<Int>,
        _ rhs: UnsafeBufferPointer<UInt8>, _ rhsRange: Range<Int>
    ) -> Bool {
        guard lhsRange.count == rhsRange.count else { return false }
        for offset in 0..<lhsRange.count
        where lhs[lhsRange.lowerBound + offset] | 0x20 != rhs[rhsRange.lowerBound + offset] | 0x20 {
            return false
        }
        return true
    }
}
