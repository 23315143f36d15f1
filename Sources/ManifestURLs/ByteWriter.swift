import Foundation

/// A growable byte buffer whose appends are one `memcpy` (the generic `Array.append(contentsOf:)` copies
/// byte by byte), used for the rewriter's output and scratch URLs.
///
/// Inlinable: the playlist rewriter, in another target, appends to it in its inner loops.
package struct ByteWriter: ~Copyable {
    @usableFromInline package var base: UnsafeMutablePointer<UInt8>
    @usableFromInline package var count = 0
    @usableFromInline var capacity: Int

    @inlinable
    package init(capacity: Int) {
        self.capacity = max(capacity, 64)
        self.base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @usableFromInline @inline(__always)
    mutating func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        var newCapacity = capacity * 2
        while newCapacity < count + extra { newCapacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.update(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }

    @inlinable @inline(__always)
    package mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    @inlinable @inline(__always)
    package mutating func append(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) {
        guard !range.isEmpty, let source = bytes.baseAddress else { return }
        let length = range.count
        reserve(length)
        if length <= 32 {
            // Two overlapping moves cover 4...32 bytes with no loop and no call: URL parts and most tag lines are
            // that short.
            let from = UnsafeRawPointer(source + range.lowerBound)
            let to = UnsafeMutableRawPointer(base + count)
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
                for offset in 0..<length { base[count &+ offset] = from.load(fromByteOffset: offset, as: UInt8.self) }
            }
        } else {
            (base + count).update(from: source + range.lowerBound, count: length)
        }
        count += length
    }

    @inlinable @inline(__always)
    package mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) { append(bytes, 0..<bytes.count) }

    @inlinable @inline(__always)
    package mutating func append(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { append($0) } }

    /// Bytes written so far, as a buffer valid until the next append.
    @inlinable
    package var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    @inlinable
    package mutating func removeAll() { count = 0 }

    @inlinable
    package mutating func truncate(to length: Int) { count = min(count, length) }

    /// The byte at `index`.
    @inlinable
    package subscript(index: Int) -> UInt8 { base[index] }

    /// A copy of the bytes as an array.
    @inlinable
    package var array: [UInt8] { Array(bytes) }
}

/// Byte strings used when writing URLs.
enum Literal {
    static let schemeSeparator: [UInt8] = Array("://".utf8)
    static let proxyPrefix: [UInt8] = Array("/o/".utf8)
    static let customPrefix: [UInt8] = Array("hlscache-".utf8)
}
