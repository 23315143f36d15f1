import Synchronization

/// An empty temporary file made for a fill while its origin request is in flight, so that the fill, once the origin
/// answers, has it ready: creating a file costs the file system an inode, slow on a loaded file system, and that is
/// no longer between the origin's answer and the requester's first byte.
struct PreparedFile: Sendable {
    /// The file's path in the temporary area.
    let path: String
    /// The open file.
    let file: OpenFile

    /// Removes the file, unused.
    func discard() {
        try? file.operations.unlink(path)
    }
}

/// A flight's prepared file, offered once by whoever made it and taken once by the fill; what is offered after the
/// fill took (or gave up) its chance is refused, and the offerer discards it.
final class PreparedFileSlot: Sendable {
    private enum State {
        case empty
        case holding(PreparedFile)
        case closed
    }

    private let state = Mutex(State.empty)

    /// Offers `file` to the fill. `false`: the fill no longer takes one; discard it.
    func offer(_ file: PreparedFile) -> Bool {
        state.withLock { state in
            guard case .empty = state else { return false }
            state = .holding(file)
            return true
        }
    }

    /// Takes the prepared file, if one was offered, and closes the slot.
    func take() -> PreparedFile? {
        state.withLock { state in
            defer { state = .closed }
            if case .holding(let file) = state { return file }
            return nil
        }
    }
}
