import OriginClient

/// An origin body that counts the bytes it passes on, and optionally keeps only a window of them.
struct CountedBody: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    typealias Failure = any Error

    let first: [UInt8]?
    let rest: OriginBody.AsyncIterator
    let metrics: any OriginCacheMetrics
    /// Bytes to drop from the start.
    let skip: Int64
    /// Bytes to keep after those, or `nil` for all.
    let limit: Int64?

    func makeAsyncIterator() -> Iterator {
        Iterator(pending: first, rest: rest, metrics: metrics, skip: skip, remaining: limit)
    }

    struct Iterator: AsyncIteratorProtocol {
        var pending: [UInt8]?
        var rest: OriginBody.AsyncIterator
        let metrics: any OriginCacheMetrics
        var skip: Int64
        var remaining: Int64?

        mutating func next() async throws -> [UInt8]? {
            while true {
                if remaining == 0 { return nil }
                var chunk: [UInt8]
                if let pending {
                    chunk = pending
                    self.pending = nil
                } else {
                    guard let next = try await rest.next() else { return nil }
                    chunk = next
                }
                metrics.countOriginBytes(chunk.count)
                if skip > 0 {
                    let dropped = Int(Swift.min(skip, Int64(chunk.count)))
                    skip -= Int64(dropped)
                    chunk.removeFirst(dropped)
                }
                if let left = remaining, Int64(chunk.count) > left { chunk.removeLast(chunk.count - Int(left)) }
                if let left = remaining { remaining = left - Int64(chunk.count) }
                if !chunk.isEmpty { return chunk }
            }
        }
    }
}
