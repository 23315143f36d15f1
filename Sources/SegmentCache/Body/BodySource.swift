/// Where a response's body bytes come from.
enum BodySource: Sendable {
    /// A published entry: the whole body is in `file` from `bodyOffset` on.
    case entry(OpenFile, bodyOffset: Int64)
    /// A fill in flight (or just finished): bytes as they arrive.
    case flight(Flight)
}
