import NIOCore

/// An answer's body as the event loop writes it (``HitPathHandler``, ``HitFront``): a shared buffer, or a file
/// region sent with `sendfile` through a handle that borrows the answer's descriptor.
struct ChannelBody {
    /// What to write after the head; `nil` for no body.
    let data: IOData?
    /// The body's length.
    let bytes: Int64
    /// The handle borrowing the slice's descriptor; the slice, kept by the answer, closes it.
    private let fileHandle: NIOFileHandle?

    /// The body of `answer`; `nil` for a body still being filled, which only the responder sends.
    init?(of answer: Answer) {
        switch answer.body {
        case .none:
            (data, bytes, fileHandle) = (nil, 0, nil)
        case .memory(let buffer):
            (data, bytes, fileHandle) = (.byteBuffer(buffer), Int64(buffer.readableBytes), nil)
        case .file(let slice):
            let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: slice.descriptor)
            let region = FileRegion(
                fileHandle: handle, readerIndex: Int(slice.offset), endIndex: Int(slice.offset + slice.length))
            (data, bytes, fileHandle) = (.fileRegion(region), slice.length, handle)
        case .stream:
            return nil
        }
    }

    /// Follows the write of `answer`'s last part, whose end the caller has just written: `connection` takes the
    /// answer's place among the connection's answers now; once `written` completes, the borrowed descriptor goes
    /// back to the slice, the access record is finished, then `done` runs. On the event loop.
    func follow(
        _ written: EventLoopFuture<Void>, of answer: Answer, components: ServerComponents,
        connection: ConnectionGuard, then done: @escaping () -> Void
    ) {
        written.assumeIsolated().whenComplete { result in
            self.written(result, answer: answer, components: components)
            done()
        }
        connection.eventLoopAnswerEnded(written)
    }

    /// The write of the answer's last part completed with `result`: the borrowed descriptor goes back to the slice,
    /// and the answer's access record is finished.
    private func written(_ result: Result<Void, any Error>, answer: Answer, components: ServerComponents) {
        _ = try? fileHandle?.takeDescriptorOwnership()
        switch result {
        case .success: answer.finished(bytes: bytes, aborted: nil, components: components)
        case .failure(let error): answer.finished(bytes: -1, aborted: error, components: components)
        }
    }
}
