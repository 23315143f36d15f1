import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address, as the address policy sees it after DNS resolution.
///
/// IPv4 addresses are stored in host byte order (`10.0.0.1` is `0x0A00_0001`);
/// IPv6 addresses as a 128-bit integer, most significant byte first.
public enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// An IPv4 address in host byte order.
    case v4(UInt32)
    /// An IPv6 address, the first byte of the address in the most significant bits.
    case v6(UInt128)

    /// Parses a textual address: dotted IPv4 (`192.0.2.1`) or IPv6 (`2001:db8::1`, `::ffff:10.0.0.1`).
    ///
    /// Square brackets around an IPv6 address (`[::1]`, as in URLs) are accepted.
    /// Scope ids (`fe80::1%eth0`) and the non-standard IPv4 forms (`127.1`, `0x7f000001`) are not.
    /// - Parameter text: the address.
    /// - Returns: `nil` when `text` is not an IP address.
    public init?(_ text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") {
            text = text.dropFirst().dropLast()
        }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            self = .v4(UInt32(bigEndian: v4.s_addr))
            return
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET6, String(text), &bytes) == 1 {
            self.init(ipv6Bytes: bytes)
            return
        }
        return nil
    }

    /// Creates an address from its network-order bytes: 4 for IPv4, 16 for IPv6.
    /// - Parameter bytes: the address bytes, most significant first.
    /// - Returns: `nil` when there are neither 4 nor 16 bytes.
    public init?(bytes: some Collection<UInt8>) {
        switch bytes.count {
        case 4:
            self = .v4(bytes.reduce(0) { $0 << 8 | UInt32($1) })
        case 16:
            self.init(ipv6Bytes: Array(bytes))
        default:
            return nil
        }
    }

    private init(ipv6Bytes bytes: [UInt8]) {
        self = .v6(bytes.reduce(0) { $0 << 8 | UInt128($1) })
    }

    /// The address in its canonical textual form (`10.0.0.1`, `::ffff:10.0.0.1`).
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch self {
        case .v4(let value):
            var address = in_addr(s_addr: value.bigEndian)
            guard inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        case .v6(let value):
            var bytes = (0..<16).map { UInt8(truncatingIfNeeded: value >> (8 * (15 - $0))) }
            guard inet_ntop(AF_INET6, &bytes, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
