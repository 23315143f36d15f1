import Foundation

/// A growable byte buffer whose appends are one `memcpy` (the generic `Array.append(contentsOf:)` copies
/// byte by byte), used for the rewriter's output and scratch URLs.
///
/// Inlinable (and so public: this compiler inlines an `@inlinable package` declaration into no other target): the
/// playlist rewriter, in another target, appends to it in its inner loops.
public struct ByteWriter: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var written = 0
    @usableFromInline var capacity: Int

    /// How many bytes are written.
    @inlinable public var count: Int { written }

    /// An empty buffer with room for `capacity` bytes (at least 64).
    @inlinable
    public init(capacity: Int) {
        self.capacity = max(capacity, 64)
        self.base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inlinable @inline(__always)
    mutating func reserve(_ extra: Int) {
        guard written + extra > capacity else { return }
        grow(toHold: extra)
    }

    /// Reallocates, doubling, so that `extra` more bytes fit (the rare path: not inlined).
    @usableFromInline
    mutating func grow(toHold extra: Int) {
        var newCapacity = capacity * 2
        while newCapacity < written + extra { newCapacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.update(from: base, count: written)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }

    /// Appends one byte.
    @inlinable @inline(__always)
    public mutating func append(_ byte: UInt8) {
        reserve(1)
        base[written] = byte
        written += 1
    }

    /// Appends the bytes of `bytes` in `range`.
    @inlinable @inline(__always)
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        guard !range.isEmpty, let source = bytes.baseAddress else { return }
        let length = range.count
        reserve(length)
        if length <= 32 {
            // Two overlapping moves cover 4...32 bytes with no loop and no call: URL parts and most tag lines are
            // that short.
            let from = UnsafeRawPointer(source + range.lowerBound)
            let to = UnsafeMutableRawPointer(base + written)
            if length > 16 {
                let head = from.loadUnaligned(as: SIMD16<UInt8>.self)
                let tail = from.loadUnaligned(fromByteOffset: length &- 16, as: SIMD16<UInt8>.self)
                to.storeBytes(of: head, as: SIMD16<UInt8>.self)
                to.storeBytes(of: tail, toByteOffset: length &- 16, as: SIMD16<UInt8>.self)
            } else if length >= 8 {
                let head = from.loadUnaligned(as: UInt64.self)
                let tail = from.loadUnaligned(fromByteOffset: length &- 8, as: UInt64.self)
                to.storeBytes(of: head, as: UInt64.self)
                to.storeBytes(of: tail, toByteOffset: length &- 8, as: UInt64.self)
            } else if length >= 4 {
                let head = from.loadUnaligned(as: UInt32.self)
                let tail = from.loadUnaligned(fromByteOffset: length &- 4, as: UInt32.self)
                to.storeBytes(of: head, as: UInt32.self)
                to.storeBytes(of: tail, toByteOffset: length &- 4, as: UInt32.self)
            } else {
                for offset in 0..<length { base[written &+ offset] = from.load(fromByteOffset: offset, as: UInt8.self) }
            }
        } else {
            (base + written).update(from: source + range.lowerBound, count: length)
        }
        written += length
    }

    /// Appends all of `bytes`.
    @inlinable @inline(__always)
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) { append(bytes, 0..<bytes.count) }

    /// Appends all of `bytes`.
    @inlinable @inline(__always)
    public mutating func append(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { append($0) } }

    /// Bytes written so far, as a buffer valid until the next append.
    @inlinable
    public var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: written) }

    /// Empties the buffer, keeping its memory.
    @inlinable
    public mutating func removeAll() { written = 0 }

    /// Keeps the first `length` bytes.
    @inlinable
    public mutating func truncate(to length: Int) { written = min(written, length) }

    /// The byte at `index`.
    @inlinable
    public subscript(index: Int) -> UInt8 { base[index] }

    /// A copy of the bytes as an array.
    @inlinable
    public var array: [UInt8] { Array(bytes) }
}

/// Byte strings used when writing URLs.
enum Literal {
    static let schemeSeparator: [UInt8] = Array("://".utf8)
    static let proxyPrefix: [UInt8] = Array("/o/".utf8)
    static let customPrefix: [UInt8] = Array("hlscache-".utf8)
}
