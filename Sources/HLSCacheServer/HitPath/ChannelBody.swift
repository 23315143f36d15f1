import HTTPTypes
import NIOCore

/// An answer's body as ``ConnectionFront`` writes it: a shared buffer, or a file
/// region sent with `sendfile` through a handle that borrows the answer's descriptor.
struct ChannelBody {
    /// What to write after the head; `nil` for no body.
    let data: IOData?
    /// The body's length.
    let bytes: Int64
    /// The handle borrowing the slice's descriptor: never closed (an entry file's descriptor is the cache's, shared
    /// by every send of it); AnswerInFlight/finish(_:components:) takes the descriptor back from it.
    fileprivate let fileHandle: NIOFileHandle?
    /// The slice whose descriptor the handle borrows: it keeps the descriptor open (its entry file's keeper, or its
    /// own `dup`) until released, so it is kept until the write completes.
    fileprivate let slice: FileSlice?

    /// Whether the body is a file region (`sendfile`).
    var isFile: Bool { slice != nil }

    /// The body of `answer`; `nil` for a body still being filled, which the front streams as it comes, or for a file
    /// that no longer holds the slice (``FileSlice/isIntact``).
    init?(of answer: Answer) {
        switch answer.body {
        case .none:
            (data, bytes, fileHandle, slice) = (nil, 0, nil, nil)
        case .memory(let buffer):
            (data, bytes, fileHandle, slice) = (.byteBuffer(buffer), Int64(buffer.readableBytes), nil, nil)
        case .file(let slice):
            // A file cut short since it was opened: its region would never finish sending.
            guard slice.isIntact else { return nil }
            let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: slice.descriptor)
            let region = FileRegion(
                fileHandle: handle, readerIndex: Int(slice.offset), endIndex: Int(slice.offset + slice.length))
            (data, bytes, fileHandle, self.slice) = (.fileRegion(region), slice.length, handle, slice)
        case .stream:
            return nil
        }
    }

    /// The write of this body completed (or failed): the borrowed descriptor goes back to the slice, which kept it
    /// open until now. For a writer that keeps no ``AnswersInFlight`` (an HTTP/2 stream's).
    func writeEnded() {
        _ = try? fileHandle?.takeDescriptorOwnership()
        withExtendedLifetime(slice) {}
    }
}

/// The answers ``ConnectionFront`` has written and whose last byte has not
/// reached the wire yet, oldest first. A channel completes its writes in the order they were made, so each
/// completion is the oldest answer's: the writer registers one callback per answer that captures only itself, and
/// the answer waits here, not in the callback.
///
/// This is the one place for an answer's written-end bookkeeping: the connection's guard takes the answer's place
/// among the connection's answers when its end is written (``append(_:body:connection:)``); once it is on the wire,
/// the writer takes it out (``popOldest()``), the borrowed descriptor goes back to the slice and the access record is
/// finished (``AnswerInFlight/finish(_:components:)``), the writer updates its own state, and last the guard learns
/// of it (``AnswerInFlight/tell(_:)``), which may close the connection. A close fails the writes still pending at
/// once, so their callbacks run inside this one: nothing may hold this queue (or the writer's state) mid-access then.
struct AnswersInFlight {
    private var answers = CircularBuffer<AnswerInFlight>(initialCapacity: 4)

    /// How many answers are being written.
    var count: Int { answers.count }

    /// `answer`, whose end the caller has just written (with `body`), is in flight: `connection` takes its place
    /// among the connection's answers now. The caller takes it out with ``popOldest()`` when that last write
    /// completes.
    mutating func append(_ answer: Answer, body: ChannelBody, connection: ConnectionGuard) {
        answers.append(
            AnswerInFlight(
                record: answer.record, status: answer.status.code, result: answer.result, bytes: body.bytes,
                bytesIfCut: -1, fileHandle: body.fileHandle, slice: body.slice,
                closing: connection.eventLoopAnswerEnded()))
    }

    /// `answer`, whose end the caller has just written after streaming `bytes` of body (or failed to: its last write
    /// fails, and the access log says how many went out), is in flight, as with ``append(_:body:connection:)``.
    mutating func append(_ answer: Answer, streamed bytes: Int64, connection: ConnectionGuard) {
        answers.append(
            AnswerInFlight(
                record: answer.record, status: answer.status.code, result: answer.result, bytes: bytes,
                bytesIfCut: bytes, fileHandle: nil, slice: nil, closing: connection.eventLoopAnswerEnded()))
    }

    /// Whether an answer in flight has a file body (sent with `sendfile`).
    var isSendingFile: Bool { answers.contains { $0.slice != nil } }

    /// The URL of the first answer in flight whose file no longer holds its slice (cut short under the send).
    func damagedFile() -> String? {
        answers.first { answer in answer.slice.map { !$0.isIntact } ?? false }?.slice?.url
    }

    /// The oldest answer in flight, taken out: its last write has just completed.
    mutating func popOldest() -> AnswerInFlight? {
        answers.popFirst()
    }
}

/// One answer in flight (``AnswersInFlight``): what finishing it needs, not the answer. A class: it goes into the
/// queue and out of it once per answer, and a reference moves without retaining each of the record's strings.
final class AnswerInFlight {
    fileprivate let record: AccessRecord
    fileprivate let status: Int
    fileprivate let result: CacheResult
    fileprivate let bytes: Int64
    /// What the access log says went out when the last write fails: -1 when it cannot tell (one write of all).
    fileprivate let bytesIfCut: Int64
    fileprivate let fileHandle: NIOFileHandle?
    /// Kept open until the write completes.
    fileprivate let slice: FileSlice?
    /// The connection guard's word for the answer: whether the connection closes after it (`nil`: not counted).
    fileprivate let closing: Bool?

    fileprivate init(
        record: AccessRecord, status: Int, result: CacheResult, bytes: Int64, bytesIfCut: Int64,
        fileHandle: NIOFileHandle?, slice: FileSlice?, closing: Bool?
    ) {
        self.record = record
        self.status = status
        self.result = result
        self.bytes = bytes
        self.bytesIfCut = bytesIfCut
        self.fileHandle = fileHandle
        self.slice = slice
        self.closing = closing
    }

    /// The answer's last write completed with `result`: the borrowed descriptor goes back to the slice and the
    /// access record is finished. On the event loop.
    func finish(_ result: Result<Void, any Error>, components: ServerComponents) {
        _ = try? fileHandle?.takeDescriptorOwnership()
        let (sent, aborted): (Int64, (any Error)?)
        switch result {
        case .success: (sent, aborted) = (bytes, nil)
        case .failure(let error): (sent, aborted) = (bytesIfCut, error)
        }
        record.finish(status: status, bytes: sent, result: self.result, aborted: aborted, components: components)
    }

    /// Tells `connection` that the answer is written: it closes the connection after it, or starts its clock.
    func tell(_ connection: ConnectionGuard) {
        connection.eventLoopAnswerWritten(closing: closing)
    }
}
