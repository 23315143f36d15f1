import Glibc

/// A fill's temporary entry file: header, then body as it arrives; sealed and renamed into place when complete.
///
/// The header is written first with the announced length (or 0), then rewritten with the real body
/// length when the body is complete; the file is synced (per ``SegmentCache/SyncPolicy``) and only then
/// renamed to its entry path. So an entry path only ever names a complete file.
struct EntryWriter {
    let path: String
    let file: OpenFile
    let headerLength: Int64
    private let metadata: EntryMetadata
    private(set) var bodyBytes: Int64 = 0

    /// Creates the temporary file and writes the header.
    /// - Throws: ``SystemError`` when the file cannot be created or written.
    init(path: String, metadata: EntryMetadata, operations: any FileOperations) throws(SystemError) {
        let descriptor = try operations.open(path, flags: O_RDWR | O_CREAT | O_EXCL, mode: 0o644)
        try self.init(path: path, file: OpenFile(descriptor: descriptor, operations: operations), metadata: metadata)
    }

    /// Writes the header into a temporary file made ahead (``PreparedFile``), empty.
    /// - Throws: ``SystemError`` when the header cannot be written (the file is then removed).
    init(prepared: PreparedFile, metadata: EntryMetadata) throws(SystemError) {
        try self.init(path: prepared.path, file: prepared.file, metadata: metadata)
    }

    private init(path: String, file: OpenFile, metadata: EntryMetadata) throws(SystemError) {
        let header = EntryHeader(metadata: metadata, bodyLength: metadata.contentLength ?? 0).encoded()
        let operations = file.operations
        let descriptor = file.descriptor
        do throws(PartialWriteError) {
            try operations.writeAll(descriptor, header, at: 0)
        } catch {
            try? operations.unlink(path)
            throw error.underlying
        }
        self.path = path
        self.file = file
        self.headerLength = Int64(header.count)
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

    /// Rewrites the header with the final body length and syncs the data if the policy says so.
    /// - Throws: ``SystemError``.
    func seal(sync: SegmentCache.SyncPolicy) throws(SystemError) {
        var final = metadata
        final.contentLength = bodyBytes
        let header = EntryHeader(metadata: final, bodyLength: bodyBytes).encoded()
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
