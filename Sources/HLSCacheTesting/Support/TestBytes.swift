import Glibc

/// Comparing and making large bodies at `memcmp` and `memcpy` speed.
///
/// The tests build in debug mode, where a Swift loop over bytes (`elementsEqual`, `==` of two arrays, `map` over a
/// range) costs tens of nanoseconds a byte. Checking a 96 MiB body that way held one of the test process's two
/// concurrency threads for seconds. Meanwhile the in-process origins, which answer on those threads, stalled, and the
/// servers under test counted them as slow: a 504, or an object fetched twice. Large bodies go through here.
public enum TestBytes {
    /// Whether `a` and `b` hold the same bytes.
    public static func equal(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { left in
            b.withUnsafeBytes { right in
                guard let first = left.baseAddress, let second = right.baseAddress else { return true }
                return memcmp(first, second, left.count) == 0
            }
        }
    }

    /// Whether `a` and `b` hold the same bytes.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        equal(a[...], b[...])
    }

    /// How many bytes of `a` differ from the byte at the same place in `b` (of the same length): a byte loop, for
    /// the rare body that is not equal.
    public static func differences(_ a: ArraySlice<UInt8>, _ b: ArraySlice<UInt8>) -> Int {
        zip(a, b).reduce(abs(a.count - b.count)) { $0 + ($1.0 == $1.1 ? 0 : 1) }
    }

    /// `count` bytes of `cycle` repeated (its last repetition cut short), made by doubling copies.
    public static func repeating(_ cycle: [UInt8], count: Int) -> [UInt8] {
        guard count > 0, !cycle.isEmpty else { return [] }
        var bytes = cycle
        bytes.reserveCapacity(count)
        while bytes.count < count {
            bytes.append(contentsOf: bytes[..<min(bytes.count, count - bytes.count)])
        }
        return bytes
    }
}
