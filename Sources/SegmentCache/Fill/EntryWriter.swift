import Glibc

/// A fill's temporary entry file: header, then body as it arrives; sealed and renamed into place when complete.
///
/// The body is written after room for the header; the header itself is written once, with the real body length,
/// when the body is complete (so no write to the file stands between the origin's head and the requester's). The
/// file is then synced (per ``SegmentCache/SyncPolicy``) and only then renamed to its entry path. So an entry path
/// only ever names a complete file, and a temporary file whose header is still zeros is never read as an entry.
struct EntryWriter {
    let path: String
    let file: OpenFile
    let headerLength: Int64
    private let metadata: EntryMetadata
    private(set) var bodyBytes: Int64 = 0

    /// Creates the temporary file.
    /// - Throws: ``SystemError`` when the file cannot be created.
    init(path: String, metadata: EntryMetadata, operations: any FileOperations) throws(SystemError) {
        let descriptor = try operations.open(path, flags: O_RDWR | O_CREAT | O_EXCL, mode: 0o644)
        self.init(path: path, file: OpenFile(descriptor: descriptor, operations: operations), metadata: metadata)
    }

    /// Takes a temporary file made ahead (``PreparedFile``), empty.
    init(prepared: PreparedFile, metadata: EntryMetadata) {
        self.init(path: prepared.path, file: prepared.file, metadata: metadata)
    }

    private init(path: String, file: OpenFile, metadata: EntryMetadata) {
        self.path = path
        self.file = file
        // Every field but the body length is known now, and the length is a fixed-size field.
        self.headerLength = Int64(EntryHeader(metadata: metadata, bodyLength: 0).encoded().count)
        self.metadata = metadata
    }

    /// The size the entry file will have.
    var fileSize: Int64 { headerLength + bodyBytes }

    /// Appends body bytes.
    /// - Throws: ``PartialWriteError`` saying how many of the bytes reached the file.
    mutating func append(_ chunk: ArraySlice<UInt8>) throws(PartialWriteError) {
        let offset = headerLength + bodyBytes
        let operations = file.operations
        let descriptor = file.descriptor
        do throws(PartialWriteError) {
            try operations.writeAll(descriptor, chunk, at: offset)
            bodyBytes += Int64(chunk.count)
        } catch {
            bodyBytes += Int64(error.written)
            throw error
        }
    }

    /// Writes the header, with the final body length, and syncs the data if the policy says so.
    /// - Throws: ``SystemError``.
    func seal(sync: SegmentCache.SyncPolicy) throws(SystemError) {
        var final = metadata
        final.contentLength = bodyBytes
        let header = EntryHeader(metadata: final, bodyLength: bodyBytes).encoded()
        // The body was written after `headerLength` bytes: a header of another size would misplace it.
        guard header.count == headerLength else { throw SystemError(code: EINVAL, operation: "seal", path: path) }
        let operations = file.operations
        let descriptor = file.descriptor
        do throws(PartialWriteError) {
            try operations.writeAll(descriptor, header, at: 0)
        } catch {
            throw error.underlying
        }
        if sync == .beforePublish { try operations.synchronize(descriptor) }
    }

    /// Renames the file to `destination`, creating the fan-out directories when missing.
    /// - Throws: ``SystemError``.
    func publish(to destination: String, creating directories: [String]) throws(SystemError) {
        let operations = file.operations
        do {
            try operations.rename(path, to: destination)
        } catch let error where error.code == ENOENT {
            for directory in directories { try operations.makeDirectory(directory) }
            try operations.rename(path, to: destination)
        }
    }

    /// Removes the temporary file; readers holding ``file`` keep reading it.
    func discard() {
        try? file.operations.unlink(path)
    }
}
