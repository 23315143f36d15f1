import ManifestURLs

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
    ///   - limits: how large the output and each substituted URI may grow; checked while rendering.
    /// - Returns: the rewritten playlist, LF line endings, ending with a newline.
    /// - Throws: ``PlaylistError/invalidBaseURL(_:)`` when `playlistURL` is not absolute;
    ///   ``PlaylistError/uriTooLong(line:limit:)`` and ``PlaylistError/outputTooLarge(line:limit:)`` when variable
    ///   substitution or rewriting would exceed `limits`.
    public func rewritten(
        playlistURL: String, mapping: URIMapping, imports: [String: String] = [:], limits: RewriteLimits = .default
    ) throws(PlaylistError) -> [UInt8] {
        try withRewritten(playlistURL: playlistURL, mapping: mapping, imports: imports, limits: limits) { Array($0) }
    }

    /// Rewrites every URI place, as ``rewritten(playlistURL:mapping:imports:limits:)`` does, and passes the result
    /// to `body` without copying it first: for a large playlist, one copy (into the caller's buffer) instead of two.
    /// - Parameters:
    ///   - playlistURL: the absolute URL the playlist was fetched from.
    ///   - mapping: what each resolved URL becomes.
    ///   - imports: the parent multivariant playlist's variables, for EXT-X-DEFINE:IMPORT.
    ///   - limits: how large the output and each substituted URI may grow.
    ///   - body: reads the rewritten bytes, valid during the call only.
    /// - Returns: what `body` returns.
    /// - Throws: as ``rewritten(playlistURL:mapping:imports:limits:)``.
    public func withRewritten<Result>(
        playlistURL: String, mapping: URIMapping, imports: [String: String] = [:], limits: RewriteLimits = .default,
        _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) throws(PlaylistError) -> Result {
        guard let base = BaseURL(playlistURL) else { throw .invalidBaseURL(playlistURL) }
        let outputLimit = limits.maxOutputBytes(inputBytes: source.count, uriPlaces: places.count)
        var output = ByteWriter(capacity: min(source.count + places.count * 48 + records.count, outputLimit))
        var scratch = ByteWriter(capacity: 1024)
        var substituted = ByteWriter(capacity: 1024)
        var failure: PlaylistError?
        source.withUnsafeBufferPointer { bytes in
            let hasVariables = hasVariableReference
            let values =
                hasVariables ? VariableSubstitution.values(of: self, query: base.queryString, imports: imports) : [:]
            places.withUnsafeBufferPointer { places in
                for (index, record) in records.enumerated() {
                    guard output.count <= outputLimit else {
                        failure = .outputTooLarge(line: index, limit: outputLimit)
                        return
                    }
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
                        var mapped: Bool
                        if hasVariables, VariableSubstitution.mayHaveReference(bytes, range) {
                            substituted.removeAll()
                            switch VariableSubstitution.substitute(
                                bytes, range, values: values, into: &substituted, limit: limits.maxURIBytes)
                            {
                            case .complete: mapped = true
                            case .unknownVariable: mapped = false
                            case .tooLong:
                                failure = .uriTooLong(line: index + 1, limit: limits.maxURIBytes)
                                return
                            }
                            if mapped {
                                mapped = mapping.append(
                                    resolving: substituted.bytes, against: base, scratch: &scratch, to: &output)
                            }
                        } else {
                            mapped = mapping.append(
                                resolving: UnsafeBufferPointer(rebasing: bytes[range]), against: base,
                                scratch: &scratch, to: &output)
                        }
                        if !mapped { output.append(bytes, range) }
                    }
                    output.append(bytes, cursor..<record.end)
                    output.append(ASCII.lf)
                }
            }
        }
        if let failure { throw failure }
        guard output.count <= outputLimit else { throw .outputTooLarge(line: records.count, limit: outputLimit) }
        return body(output.bytes)
    }

    /// Rewrites and returns the text; see ``rewritten(playlistURL:mapping:imports:)``.
    public func rewrittenText(
        playlistURL: String, mapping: URIMapping, imports: [String: String] = [:], limits: RewriteLimits = .default
    ) throws(PlaylistError) -> String {
        String(
            decoding: try rewritten(playlistURL: playlistURL, mapping: mapping, imports: imports, limits: limits),
            as: UTF8.self)
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
                let span = place.start..<place.end
                let resolved: Bool
                if VariableSubstitution.mayHaveReference(bytes, span) {
                    resolved =
                        VariableSubstitution.substitute(
                            bytes, span, values: values, into: &substituted,
                            limit: RewriteLimits.default.maxURIBytes) == .complete
                        && URLResolver.resolve(substituted.bytes, against: base, into: &scratch) != nil
                } else {
                    resolved =
                        URLResolver.resolve(UnsafeBufferPointer(rebasing: bytes[span]), against: base, into: &scratch)
                        != nil
                }
                guard resolved else {
                    results.append(nil)
                    continue
                }
                results.append(String(decoding: scratch.bytes, as: UTF8.self))
            }
        }
        return results
    }
}
