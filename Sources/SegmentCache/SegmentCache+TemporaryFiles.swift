import Glibc

/// The temporary files fills write their bodies to.
extension SegmentCache {
    /// A temporary file for an answer's body (kept, or only its readers' buffer), or `nil` to pass it through memory
    /// (no writable directory, oversized header, or the file cannot be created: on a full file system, after making
    /// room when `mayEvict`).
    func makeWriter(for metadata: EntryMetadata, prepared: PreparedFile?, mayEvict: Bool) -> EntryWriter? {
        guard let temporaryArea else { return nil }
        let headerLength = EntryHeader(metadata: metadata, bodyLength: 0).encoded().count
        guard headerLength <= EntryHeader.maxLength else {
            prepared?.discard()
            return nil
        }
        if let prepared { return EntryWriter(prepared: prepared, metadata: metadata) }
        do throws(SystemError) {
            return try EntryWriter(path: temporaryArea.makePath(), metadata: metadata, operations: operations)
        } catch  where error.code == ENOSPC && mayEvict && evictForFullDisk(freeing: 8 << 20, keeping: nil) {
            return try? EntryWriter(path: temporaryArea.makePath(), metadata: metadata, operations: operations)
        } catch {
            reportDiskError(error, key: metadata.key)
            return nil
        }
    }

    /// Makes the temporary file `flight`'s fill will write, while its origin request is in flight (the fill makes its
    /// own if this comes too late, or fails).
    func prepareFile(for flight: Flight) {
        guard let temporaryArea else { return }
        let path = temporaryArea.makePath()
        guard let descriptor = try? operations.open(path, flags: O_RDWR | O_CREAT | O_EXCL, mode: 0o644) else {
            return
        }
        let prepared = PreparedFile(path: path, file: OpenFile(descriptor: descriptor, operations: operations))
        if !flight.preparedFile.offer(prepared) { prepared.discard() }
    }
}
