/// The status line and headers of the final hop, handed from the worker thread to the fetching task.
struct ResponseHead: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var effectiveURL: String
    var contentLength: Int64?
    var redirectCount: Int
}
