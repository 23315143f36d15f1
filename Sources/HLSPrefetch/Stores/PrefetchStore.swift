/// Where prefetched objects go: the server's cache directory, a running server, or an `--output` folder.
protocol PrefetchStore: Sendable {
    /// The URL to fetch the entry playlist from, for the origin URL the user gave.
    func entryURL(for originURL: String) -> String

    /// A playlist's bytes; `fresh` asks for a copy no older than the store's freshness rules allow.
    /// - Throws: ``FailedFetch``.
    func playlist(_ url: String, fresh: Bool) async throws -> [UInt8]

    /// Makes sure `object` is stored.
    /// - Returns: how it went: fetched (with its byte count) or already there.
    /// - Throws: ``FailedFetch``, or an error of the store itself (a full disk).
    func store(_ object: PrefetchObject) async throws -> StoreOutcome

    /// Whether `object` is stored (for writing playlists that list only what is there).
    func isStored(_ object: PrefetchObject) -> Bool

    /// Called with the current recordings whenever they change, and once at the end with `final` set; the
    /// output folder writes its playlists here.
    func publish(_ snapshot: PrefetchSnapshot, final: Bool) throws

    /// Releases what the store holds (the cache writes its index).
    func close() async

    /// Writes a DASH MPD (rewritten to the stored files' paths) as the entry of an output folder.
    func writeMPD(_ bytes: [UInt8], rewrittenFrom url: String) throws
}

/// What storing an object did.
enum StoreOutcome: Sendable, Hashable {
    /// Fetched and stored, this many bytes.
    case fetched(bytes: Int64)
    /// Already stored; nothing fetched.
    case present(bytes: Int64)
}

extension PrefetchStore {
    func isStored(_ object: PrefetchObject) -> Bool { true }
    func publish(_ snapshot: PrefetchSnapshot, final: Bool) throws {}
    func writeMPD(_ bytes: [UInt8], rewrittenFrom url: String) throws {}
}
