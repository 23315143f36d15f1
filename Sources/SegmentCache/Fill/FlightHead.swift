/// What a fill knows once the origin has answered (or the store has, when a re-check found the entry).
struct FlightHead: Sendable {
    /// Status and metadata; `contentLength` is the announced length, or `nil`.
    let metadata: EntryMetadata
    /// Whether the body is being written to the store (`false`: pass-through, not cacheable or too large).
    let isStored: Bool
    /// Whether the flight was answered by an entry published while it was starting (a re-check hit).
    let isFromStore: Bool
    /// What an upstream cache said of the object (``SourceResponse/upstreamCache``), for a fill's readers.
    var upstreamCache: String? = nil
}

/// What a waiting reader of a flight waits for.
enum FlightWaitCondition: Sendable, Hashable {
    /// The origin's answer.
    case head
    /// Body bytes past this offset, or the end of the fill.
    case data(after: Int64)
}
