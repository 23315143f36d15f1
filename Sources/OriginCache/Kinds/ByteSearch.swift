extension StringProtocol {
    /// Whether `needle`'s UTF-8 bytes occur in this string's, compared byte for byte: for ASCII markers in URLs and
    /// media types, where `contains(_:)` (which builds a Unicode-aware searcher on every call) costs a request more
    /// than the rest of its classification.
    package func containsBytes(of needle: String) -> Bool {
        let pattern = Array(needle.utf8)
        guard let first = pattern.first else { return true }
        let found = utf8.withContiguousStorageIfAvailable { haystack in
            Self.find(pattern, first: first, in: haystack)
        }
        return found ?? Self.find(pattern, first: first, in: Array(utf8))
    }

    private static func find(
        _ pattern: [UInt8], first: UInt8, in haystack: some RandomAccessCollection<UInt8>
    ) -> Bool {
        guard haystack.count >= pattern.count else { return false }
        var start = haystack.startIndex
        let last = haystack.index(haystack.endIndex, offsetBy: -pattern.count)
        while start <= last {
            if haystack[start] == first, haystack[start...].starts(with: pattern) { return true }
            start = haystack.index(after: start)
        }
        return false
    }
}
