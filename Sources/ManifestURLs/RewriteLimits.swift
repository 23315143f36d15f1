/// How large a rewritten playlist may grow, checked while it is rendered, so that a small hostile playlist
/// (an EXT-X-DEFINE expansion bomb) cannot make a huge one.
///
/// The output may be at most ``outputFactor`` times the input, plus ``bytesPerURI`` for each URI place (a
/// relative URI grows by its base URL and the proxy prefix when it is rewritten), and never more than
/// ``maxOutputBytes``.
public struct RewriteLimits: Sendable, Hashable {
    /// The longest URI accepted after variable substitution, in bytes (default 16 KiB).
    public var maxURIBytes: Int
    /// How many times its input's size a rewritten playlist may be (default 4).
    public var outputFactor: Int
    /// What each URI place may add on top of that, in bytes (default 1 KiB).
    public var bytesPerURI: Int
    /// The largest rewritten playlist, in bytes, whatever its input (default 64 MiB).
    public var maxOutputBytes: Int

    /// Creates limits.
    /// - Parameters:
    ///   - maxURIBytes: the longest URI after variable substitution.
    ///   - outputFactor: how many times the input the output may be.
    ///   - bytesPerURI: what each URI place may add.
    ///   - maxOutputBytes: the absolute cap.
    public init(
        maxURIBytes: Int = 16 << 10, outputFactor: Int = 4, bytesPerURI: Int = 1 << 10, maxOutputBytes: Int = 64 << 20
    ) {
        self.maxURIBytes = maxURIBytes
        self.outputFactor = outputFactor
        self.bytesPerURI = bytesPerURI
        self.maxOutputBytes = maxOutputBytes
    }

    /// 16 KiB URIs; 4× the input plus 1 KiB per URI, at most 64 MiB.
    public static let `default` = RewriteLimits()

    /// The output bound for an input of `inputBytes` bytes with `uriPlaces` URI places (saturating, never trapping).
    /// - Parameters:
    ///   - inputBytes: the playlist's size.
    ///   - uriPlaces: how many URI places it has.
    /// - Returns: the largest output allowed.
    public func maxOutputBytes(inputBytes: Int, uriPlaces: Int) -> Int {
        let scaled = inputBytes.multipliedReportingOverflow(by: outputFactor)
        let perURI = uriPlaces.multipliedReportingOverflow(by: bytesPerURI)
        guard !scaled.overflow, !perURI.overflow else { return maxOutputBytes }
        let sum = scaled.partialValue.addingReportingOverflow(perURI.partialValue)
        return sum.overflow ? maxOutputBytes : min(sum.partialValue, maxOutputBytes)
    }
}
