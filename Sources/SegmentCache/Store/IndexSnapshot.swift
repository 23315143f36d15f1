import Glibc

/// The index written at a clean close and read at the next open, so that opening a large cache is one
/// sequential read instead of a directory scan.
///
/// `<root>/index`: magic `HLSI`, version, entry count, then per entry its digest, size and last access,
/// then a CRC-32 of everything before it. Opening consumes it (reads, then removes it), so after a crash
/// there is none and the open scans the directory.
///
/// A snapshot is only written by an instance that had the directory to itself: an instance that opens
/// while another is alive creates `<root>/index.shared`, and no instance writes a snapshot while that
/// marker exists; the next instance to open alone scans and removes it. The index only steers eviction
/// (lookups always open the entry file), so even a lagging index never serves wrong bytes.
enum IndexSnapshot {
    private static let magic: [UInt8] = Array("HLSI".utf8)
    private static let version: UInt32 = 1
    private static let recordLength = 48

    /// The snapshot's path in `root`.
    static func path(in root: String) -> String { root + "/index" }

    /// The marker saying another instance shared the directory since the last scan.
    static func sharedMarkerPath(in root: String) -> String { root + "/index.shared" }

    /// Notes whether the directory is shared: creates the marker when other instances are alive, removes it
    /// when this one is alone (its index comes from a scan then).
    /// - Returns: whether a snapshot must not be trusted, now or at close: the marker exists.
    static func markShared(in root: String, othersAlive: Bool, operations: any FileOperations) -> Bool {
        let marker = sharedMarkerPath(in: root)
        if othersAlive {
            if let descriptor = try? operations.open(marker, flags: O_WRONLY | O_CREAT, mode: 0o644) {
                operations.close(descriptor)
            }
            return true
        }
        let existed = access(marker, F_OK) == 0
        if existed { try? operations.unlink(marker) }
        return existed
    }

    /// Whether another instance has shared the directory since this one opened.
    static func isShared(in root: String) -> Bool { access(sharedMarkerPath(in: root), F_OK) == 0 }

    /// Reads and removes the snapshot; `nil` when there is none or it is not valid.
    static func consume(in root: String, operations: any FileOperations) -> [ScannedEntry]? {
        let path = path(in: root)
        guard let descriptor = try? operations.open(path, flags: O_RDONLY, mode: 0) else { return nil }
        let file = OpenFile(descriptor: descriptor, operations: operations)
        try? operations.unlink(path)
        guard let size = try? operations.size(of: descriptor), size >= 20, size <= Int64(Int32.max),
            let bytes = try? file.read(count: Int(size), at: 0), bytes.count == Int(size)
        else { return nil }
        return decode(bytes)
    }

    /// Writes a snapshot of `entries`: to a temporary file, then renamed into place.
    static func write(
        _ entries: [ScannedEntry], in root: String, temporaryPath: String, operations: any FileOperations
    ) throws(SystemError) {
        let bytes = encode(entries)
        let descriptor = try operations.open(temporaryPath, flags: O_WRONLY | O_CREAT | O_TRUNC, mode: 0o644)
        let file = OpenFile(descriptor: descriptor, operations: operations)
        do throws(PartialWriteError) {
            try operations.writeAll(file.descriptor, bytes, at: 0)
        } catch {
            try? operations.unlink(temporaryPath)
            throw error.underlying
        }
        do {
            try operations.rename(temporaryPath, to: path(in: root))
        } catch {
            try? operations.unlink(temporaryPath)
            throw error
        }
    }

    static func encode(_ entries: [ScannedEntry]) -> [UInt8] {
        var bytes = magic
        bytes.reserveCapacity(20 + entries.count * recordLength)
        append(UInt64(version), to: &bytes, width: 4)
        append(UInt64(entries.count), to: &bytes, width: 8)
        for entry in entries {
            let digest = entry.digest
            for word in [digest.url.high, digest.url.low, digest.rangeHigh, digest.rangeLow] {
                append(word, to: &bytes, width: 8)
            }
            append(UInt64(bitPattern: entry.size), to: &bytes, width: 8)
            append(UInt64(bitPattern: entry.lastAccess), to: &bytes, width: 8)
        }
        append(UInt64(CRC32.update(0, bytes)), to: &bytes, width: 4)
        return bytes
    }

    static func decode(_ bytes: [UInt8]) -> [ScannedEntry]? {
        bytes.withUnsafeBytes { raw -> [ScannedEntry]? in
            func word(_ offset: Int) -> UInt64 {
                UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            }
            func half(_ offset: Int) -> UInt32 {
                UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            }
            guard raw.count >= 20, raw.prefix(4).elementsEqual(magic), half(4) == version else { return nil }
            let count = Int(clamping: word(8))
            guard count <= (raw.count - 20) / recordLength, raw.count == 16 + count * recordLength + 4,
                half(raw.count - 4) == CRC32.update(0, UnsafeRawBufferPointer(rebasing: raw[0..<raw.count - 4]))
            else { return nil }
            var entries: [ScannedEntry] = []
            entries.reserveCapacity(count)
            for index in 0..<count {
                let base = 16 + index * recordLength
                let digest = EntryDigest(
                    url: URLDigest(high: word(base), low: word(base + 8)),
                    rangeHigh: word(base + 16),
                    rangeLow: word(base + 24)
                )
                let size = Int64(bitPattern: word(base + 32))
                guard size >= 0 else { return nil }
                entries.append(ScannedEntry(digest: digest, size: size, lastAccess: Int64(bitPattern: word(base + 40))))
            }
            return entries
        }
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8], width: Int) {
        for shift in stride(from: 0, to: width * 8, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }
}
