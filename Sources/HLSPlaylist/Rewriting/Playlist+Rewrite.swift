extension Playlist {
    /// Rewrites every URI place and serializes the result.
    ///
    /// Each place (URI lines; the URI attributes of EXT-X-KEY, -SESSION-KEY, -MAP, -MEDIA, -I-FRAME-STREAM-INF,
    /// -SESSION-DATA, -PART, -PRELOAD-HINT, -RENDITION-REPORT; SERVER-URI of EXT-X-CONTENT-STEERING;
    /// X-ASSET-URI and X-ASSET-LIST of EXT-X-DATERANGE) has its variables substituted, is resolved against
    /// `playlistURL` (RFC 3986) and passed to `mapping`. Places whose target is not an `http`/`https` URL
    /// (`skd:`, `data:`), or whose variables cannot be known (an IMPORT not supplied, a QUERYPARAM absent from
    /// the URL), are left as written. Nothing else on any line changes.
    /// - Parameters:
    ///   - playlistURL: the absolute URL the playlist was fetched from.
    ///   - mapping: what each resolved URL becomes.
    ///   - imports: the parent multivariant playlist's variables, for EXT-X-DEFINE:IMPORT.
    /// - Returns: the rewritten playlist, LF line endings, ending with a newline.
    /// - Throws: ``PlaylistError/invalidBaseURL(_:)`` when `playlistURL` is not absolute.
    public func rewritten(
        playlistURL: String, mapping: URIMapping, imports: [String: String] = [:]
    ) throws(PlaylistError) -> [UInt8] {
        guard let base = BaseURL(playlistURL) else { throw .invalidBaseURL(playlistURL) }
        var output = ByteWriter(capacity: source.count + places.count * 48 + records.count)
        var scratch = ByteWriter(capacity: 1024)
        var substituted = ByteWriter(capacity: 1024)
        source.withUnsafeBufferPointer { bytes in
            let hasVariables = bytes.containsVariableReference()
            let values =
                hasVariables ? VariableSubstitution.values(of: self, query: base.queryString, imports: imports) : [:]
            places.withUnsafeBufferPointer { places in
                for record in records {
                    guard record.placeCount > 0 else {
                        output.append(bytes, record.start..<record.end)
                        output.append(ASCII.lf)
                        continue
                    }
                    var cursor = record.start
                    let first = Int(record.firstPlace)
                    for place in places[first..<(first + Int(record.placeCount))] {
                        output.append(bytes, cursor..<place.start)
                        cursor = place.end
                        let range = place.start..<place.end
                        scratch.removeAll()
                        var mapped: Bool
                        if hasVariables, VariableSubstitution.mayHaveReference(bytes, range) {
                            substituted.removeAll()
                            mapped = VariableSubstitution.substitute(bytes, range, values: values, into: &substituted)
                            if mapped {
                                mapped = Self.map(
                                    substituted.bytes, base: base, mapping: mapping, scratch: &scratch, output: &output)
                            }
                        } else {
                            mapped = Self.map(
                                UnsafeBufferPointer(rebasing: bytes[range]), base: base, mapping: mapping,
                                scratch: &scratch, output: &output)
                        }
                        if !mapped { output.append(bytes, range) }
                    }
                    output.append(bytes, cursor..<record.end)
                    output.append(ASCII.lf)
                }
            }
        }
        return output.array
    }

    /// Rewrites and returns the text; see ``rewritten(playlistURL:mapping:imports:)``.
    public func rewrittenText(
        playlistURL: String, mapping: URIMapping, imports: [String: String] = [:]
    ) throws(PlaylistError) -> String {
        String(decoding: try rewritten(playlistURL: playlistURL, mapping: mapping, imports: imports), as: UTF8.self)
    }

    /// The variables this (multivariant) playlist offers to EXT-X-DEFINE:IMPORT in its media playlists.
    /// - Parameter playlistURL: the URL it was fetched from, for QUERYPARAM definitions.
    public func exportedVariables(playlistURL: String) -> [String: String] {
        VariableSubstitution.exported(by: self, query: BaseURL(playlistURL)?.queryString)
    }

    /// Every URI place resolved against `playlistURL`, after variable substitution, in order; places whose
    /// target is not an `http`/`https` URL, or whose variables cannot be known, are `nil`.
    /// - Parameters:
    ///   - playlistURL: the absolute URL the playlist was fetched from.
    ///   - imports: the parent playlist's variables.
    public func resolvedURIs(playlistURL: String, imports: [String: String] = [:]) -> [String?] {
        guard let base = BaseURL(playlistURL) else { return Array(repeating: nil, count: places.count) }
        let values = VariableSubstitution.values(of: self, query: base.queryString, imports: imports)
        var results: [String?] = []
        var substituted = ByteWriter(capacity: 256)
        var scratch = ByteWriter(capacity: 256)
        source.withUnsafeBufferPointer { bytes in
            for place in places {
                substituted.removeAll()
                scratch.removeAll()
                guard
                    VariableSubstitution.substitute(bytes, place.start..<place.end, values: values, into: &substituted),
                    URLResolver.resolve(substituted.bytes, against: base, into: &scratch) != nil
                else {
                    results.append(nil)
                    continue
                }
                results.append(String(decoding: scratch.bytes, as: UTF8.self))
            }
        }
        return results
    }

    @inline(__always)
    private static func map(
        _ reference: UnsafeBufferPointer<UInt8>, base: BaseURL, mapping: URIMapping,
        scratch: inout ByteWriter, output: inout ByteWriter
    ) -> Bool {
        guard let layout = URLResolver.resolve(reference, against: base, into: &scratch) else { return false }
        return mapping.append(scratch, layout, to: &output)
    }
}
