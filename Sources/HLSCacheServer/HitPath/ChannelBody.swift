import HTTPTypes
import NIOCore

/// An answer's body as the event loop writes it (``HitPathHandler``, ``HitFront``): a shared buffer, or a file
/// region sent with `sendfile` through a handle that borrows the answer's descriptor.
struct ChannelBody {
    /// What to write after the head; `nil` for no body.
    let data: IOData?
    /// The body's length.
    let bytes: Int64
    /// The handle borrowing the slice's descriptor.
    fileprivate let fileHandle: NIOFileHandle?
    /// The slice whose descriptor the handle borrows: it closes the descriptor when released, so it is kept until
    /// the write completes.
    fileprivate let slice: FileSlice?

    /// The body of `answer`; `nil` for a body still being filled, which only the responder sends.
    init?(of answer: Answer) {
        switch answer.body {
        case .none:
            (data, bytes, fileHandle, slice) = (nil, 0, nil, nil)
        case .memory(let buffer):
            (data, bytes, fileHandle, slice) = (.byteBuffer(buffer), Int64(buffer.readableBytes), nil, nil)
        case .file(let slice):
            let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: slice.descriptor)
            let region = FileRegion(
                fileHandle: handle, readerIndex: Int(slice.offset), endIndex: Int(slice.offset + slice.length))
            (data, bytes, fileHandle, self.slice) = (.fileRegion(region), slice.length, handle, slice)
        case .stream:
            return nil
        }
    }

}

/// The answers an event-loop writer (``HitPathHandler``, ``HitFront``) has written and whose last byte has not
/// reached the wire yet, oldest first. A channel completes its writes in the order they were made, so each
/// completion is the oldest answer's: the writer registers one callback per answer that captures only itself, and
/// the answer waits here, not in the callback.
///
/// This is the one place for an answer's written-end bookkeeping: the connection's guard takes the answer's place
/// among the connection's answers when its end is written (``append(_:body:connection:)``); once it is on the wire
/// (``oldestWritten(_:components:connection:)``), the borrowed descriptor goes back to the slice, the access record
/// is finished, and the guard closes the connection or starts its clock.
struct AnswersInFlight {
    /// What finishing an answer needs, not the answer: a small value to keep and move.
    private struct InFlight {
        var record: AccessRecord
        var status: Int
        var result: CacheResult
        var bytes: Int64
        var fileHandle: NIOFileHandle?
        /// Kept open until the write completes.
        var slice: FileSlice?
        /// The connection guard's word for the answer: whether the connection closes after it (`nil`: not counted).
        var closing: Bool?
    }

    private var answers = CircularBuffer<InFlight>(initialCapacity: 4)

    /// How many answers are being written.
    var count: Int { answers.count }

    /// `answer`, whose end the caller has just written (with `body`), is in flight: `connection` takes its place
    /// among the connection's answers now. The caller calls ``oldestWritten(_:components:connection:)`` when that
    /// last write completes.
    mutating func append(_ answer: Answer, body: ChannelBody, connection: ConnectionGuard) {
        answers.append(
            InFlight(
                record: answer.record, status: answer.status.code, result: answer.result, bytes: body.bytes,
                fileHandle: body.fileHandle, slice: body.slice, closing: connection.eventLoopAnswerEnded()))
    }

    /// The oldest answer's last write completed with `result`: the borrowed descriptor goes back to the slice, the
    /// access record is finished, and `connection` learns that the answer is written. On the event loop.
    mutating func oldestWritten(
        _ result: Result<Void, any Error>, components: ServerComponents, connection: ConnectionGuard
    ) {
        guard let written = answers.popFirst() else { return }
        _ = try? written.fileHandle?.takeDescriptorOwnership()
        let (bytes, aborted): (Int64, (any Error)?)
        switch result {
        case .success: (bytes, aborted) = (written.bytes, nil)
        case .failure(let error): (bytes, aborted) = (-1, error)
        }
        written.record.finish(
            status: written.status, bytes: bytes, result: written.result, aborted: aborted, components: components)
        connection.eventLoopAnswerWritten(closing: written.closing)
    }
}
